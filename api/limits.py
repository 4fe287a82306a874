"""How fast a program may call the API: per token (a bearer) and per address (everyone
else), in fixed windows counted in the shared cache like the site's other limits
(``peerrevenue.ratelimit``), announced with the IETF ``RateLimit-Policy`` / ``RateLimit``
headers (draft-ietf-httpapi-ratelimit-headers) and, past the limit, 429 with ``Retry-After``.

With Redis gone nothing can count, and, as for the site's trade and save limits, requests go
through until it is back (the limits that guard accounts are the sign-in pages', not these).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.http import HttpRequest

from peerrevenue.ratelimit import client_address, count_attempt, seconds_until_reset

from .auth import secret_of
from .tokens import SECRET_PREFIX


@dataclass(frozen=True, slots=True)
class Allowance:
    policy: str  # "token" or "address"
    limit: int
    window: int
    used: int | None  # None: nothing could count
    reset: int  # seconds until the window starts again

    @property
    def exceeded(self) -> bool:
        return self.used is not None and self.used > self.limit

    def headers(self) -> dict[str, str]:
        found = {"RateLimit-Policy": f'"{self.policy}";q={self.limit};w={self.window}'}
        if self.used is not None:
            left = max(self.limit - self.used, 0)
            found["RateLimit"] = f'"{self.policy}";r={left};t={self.reset}'
        if self.exceeded:
            found["Retry-After"] = str(self.reset)
        return found


def count_request(request: HttpRequest) -> Allowance:
    """Count this request against its token's allowance, or its address's."""
    window = settings.API_RATE_WINDOW_SECONDS
    secret = secret_of(request)
    if secret is not None and secret.startswith(SECRET_PREFIX):
        # Counted under the secret's digest, never the secret: cache keys can be listed.
        identity = hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        policy, limit = "token", settings.API_REQUESTS_PER_TOKEN
    else:
        identity, policy, limit = (
            client_address(request),
            "address",
            settings.API_REQUESTS_PER_ADDRESS,
        )
    used = count_attempt(f"api-{policy}", identity, window_seconds=window)
    return Allowance(
        policy=policy,
        limit=limit,
        window=window,
        used=used,
        reset=seconds_until_reset(window_seconds=window),
    )
