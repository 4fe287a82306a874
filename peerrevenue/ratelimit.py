"""Fixed-window rate limits kept in the cache (Redis in production, so all web workers share)."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The address to count attempts against.

    With no proxy in front (RATELIMIT_TRUSTED_PROXIES = 0) that is REMOTE_ADDR: any
    X-Forwarded-For is the client's own invention. Behind N proxies, each appends the address
    it saw, so the client is the N-th entry from the end; entries before it are whatever the
    client sent, and keying on them would let anyone dodge a limit with a made-up header.
    """
    remote = request.META.get("REMOTE_ADDR", "unknown")
    proxies = settings.RATELIMIT_TRUSTED_PROXIES
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    hops = [hop for hop in hops if hop]
    return hops[-proxies] if len(hops) >= proxies else remote


def is_limited(scope: str, identity: str, *, limit: int, window_seconds: int) -> bool:
    """Count one attempt for identity in scope; True once it exceeds limit within the window."""
    window = int(time.time() // window_seconds)
    key = f"ratelimit:{scope}:{identity}:{window}"
    # add() is atomic and only sets a missing key, so concurrent first hits do not reset it.
    if cache.add(key, 1, timeout=window_seconds + 1):
        return limit < 1
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window_seconds + 1)
        count = 1
    return count > limit
