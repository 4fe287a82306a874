"""Fixed-window rate limits kept in the cache (Redis in production, so all web workers share).

While Redis is unreachable the cache cannot count. A limit that only slows a script down (trades,
quotes, saves) then lets requests through: the site stays usable. A limit that guards accounts
(sign-in guesses, sign-ups, reset mails) must hold: its caller passes ``without_cache``, a
counter that all workers share by other means (accounts.attempts counts in PostgreSQL).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from . import metrics


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


# (key, window seconds) → the attempts counted under the key, this one included.
Counter = Callable[[str, int], int]


def is_limited(
    scope: str,
    identity: str,
    *,
    limit: int,
    window_seconds: int,
    without_cache: Counter | None = None,
) -> bool:
    """Count one attempt for identity in scope; True once it exceeds limit within the window.

    With the cache unreachable, ``without_cache`` counts instead; without one, nothing is
    limited until the cache is back.
    """
    count = count_attempt(
        scope, identity, window_seconds=window_seconds, without_cache=without_cache
    )
    if count is None:
        return False
    if count > limit:
        metrics.RATE_LIMITED.labels(scope).inc()
        return True
    return False


def count_attempt(
    scope: str, identity: str, *, window_seconds: int, without_cache: Counter | None = None
) -> int | None:
    """Count one attempt for identity in scope: the attempts in the current window, this one
    included; None when nothing can count (the cache is unreachable, no ``without_cache``).
    For callers that tell the client how much is left (the API's ``RateLimit`` header)."""
    window = int(time.time() // window_seconds)
    key = f"ratelimit:{scope}:{identity}:{window}"
    count = _count_in_cache(key, window_seconds)
    if count is None and without_cache is not None:
        count = without_cache(key, window_seconds)
    return count


def _count_in_cache(key: str, window_seconds: int) -> int | None:
    """The attempts under ``key``, this one counted; None if the cache cannot count."""
    count = getattr(cache, "count", None)
    if count is not None:  # Redis (peerrevenue.cache): one round trip
        found: int | None = count(key, window_seconds + 1)
        return found
    # add() is atomic and only sets a missing key, so concurrent first hits do not reset it.
    if cache.add(key, 1, timeout=window_seconds + 1):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # no counter: expired between add and incr, or Redis is unreachable
        unavailable = getattr(cache, "unavailable", None)
        if unavailable is not None and unavailable():
            return None
        cache.add(key, 1, timeout=window_seconds + 1)
        return 1


def seconds_until_reset(*, window_seconds: int, now: float | None = None) -> int:
    """Seconds until the current window ends, when every count in it starts again from zero."""
    now = time.time() if now is None else now
    return max(1, math.ceil(window_seconds - now % window_seconds))


def wait_text(seconds: int) -> str:
    """How long to wait, as a person says it: "40 seconds", "a minute", "4 minutes", "5 hours"."""
    if seconds < 60:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    if seconds < 90 * 60:
        minutes = math.ceil(seconds / 60)
        return "a minute" if minutes == 1 else f"{minutes} minutes"
    hours = math.ceil(seconds / 3600)
    return f"{hours} hours"


def refuse_if_too_many(
    request: HttpRequest, *, scope: str, limit: int, done: str, back: str
) -> HttpResponse | None:
    """Count one attempt at ``scope`` for the signed-in user; past ``limit`` a window, the 429
    page that says what was refused and how long to wait (``Retry-After`` too), else None.

    ``done`` completes "You have … N times in the last few minutes" ("watched or unwatched a
    category"); ``back`` is where the page links to. Counted per user, not per address: one
    account cannot go faster from many addresses, and people behind one address do not share.
    """
    window = settings.RATELIMIT_WINDOW_SECONDS
    if not is_limited(scope, f"user:{request.user.pk}", limit=limit, window_seconds=window):
        return None
    wait = seconds_until_reset(window_seconds=window)
    message = (
        f"You have {done} {limit:,} times in the last {wait_text(window)}, the most we take. "
        f"Nothing was changed; try again in {wait_text(wait)}."
    )
    response = render(request, "429.html", {"message": message, "back": back}, status=429)
    response["Retry-After"] = str(wait)
    return response


def refuse_if_signed_out_or_too_many(
    request: HttpRequest, *, scope: str, limit: int, done: str, back: str
) -> HttpResponse | None:
    """Sign-in first, then ``refuse_if_too_many``: a form that only a signed-in reader may send
    goes to the sign-in page and, after it, to ``back`` (the form is POST-only, so not to
    itself); a signed-in one counts against ``scope``'s limit. None when it may go on."""
    # Imported on use: the auth views import forms and models, and this module is imported
    # by the cache backend and the API's middleware, which must not need the apps loaded.
    from django.contrib.auth.views import redirect_to_login

    if not request.user.is_authenticated:
        return redirect_to_login(back)
    return refuse_if_too_many(request, scope=scope, limit=limit, done=done, back=back)
