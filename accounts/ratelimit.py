"""Fixed-window rate limits kept in the cache (Redis in production, so all web workers share)."""

from __future__ import annotations

import time

from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    # Behind the proxy REMOTE_ADDR is the proxy, which appends the address it saw to
    # X-Forwarded-For: the last hop is the client. Earlier hops are whatever the client sent,
    # so keying on them would let anyone dodge a limit with a made-up header.
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    return forwarded.split(",")[-1].strip() or request.META.get("REMOTE_ADDR", "unknown")


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
