"""Whole anonymous pages kept for at most a second in this process ("microcaching").

Every anonymous page is right as of the request that rendered it (its facts are read from the
database, ``peerrevenue.keep``); a hundred anonymous readers a second of one page would each pay
that read. This middleware answers them from the page this process rendered less than
``settings.MICROCACHE_SECONDS`` ago instead, so a change shows to anonymous readers within that
time on every process, and at once to signed-in readers, who are never answered from here.

What is kept, and for whom:

- only a GET or HEAD with no cookie but the CSRF one (no session, no messages, no
  ``pr_written``: a client that just wrote must read its write), for its method, scheme, host
  (as Django validates it: a foreign host is refused as before) and full path;
- only a 200 that sets no cookie, streams nothing, says nothing private (``Cache-Control``
  ``private``, ``no-cache`` or ``no-store``) and varies on nothing but the cookie;
- until ``MICROCACHE_SECONDS`` after the request *started*, not after it was rendered: a write
  committed after the render's reads began is then shown by any request that starts at most
  that long after the write.

Nothing is shared between processes and nothing is invalidated: an entry simply ends.
``MICROCACHE_SECONDS = 0`` turns it off (the test suite does, so that a test reads its own
writes at once; ``tests/test_microcache.py`` turns it on).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse
from django.utils.cache import cc_delim_re

from .keep import SizedLRU

BUDGET = 16_000_000  # bytes per process: about a hundred category pages
_PRIVATE = ("private", "no-cache", "no-store")


@dataclass(frozen=True, slots=True)
class Page:
    started: float  # time.monotonic() when the request that rendered it started
    expires: float
    status: int
    headers: tuple[tuple[str, str], ...]
    content: bytes

    def response(self, now: float) -> HttpResponse:
        # A new response each time: the middleware above (request id) writes into it.
        response = HttpResponse(self.content, status=self.status)
        for name, value in self.headers:
            response[name] = value
        # How old the answer is, as any HTTP cache says it (RFC 9111, 5.1): whole seconds.
        response["Age"] = str(int(now - self.started))
        return response


pages: SizedLRU[Page] = SizedLRU(BUDGET)


def page_key(request: HttpRequest) -> tuple[str, ...] | None:
    """What the page kept for ``request`` is kept under, or ``None`` if it may not be kept:
    a reader with a session, messages or a write to read back gets their own render."""
    if request.method not in ("GET", "HEAD"):
        return None
    if any(name != settings.CSRF_COOKIE_NAME for name in request.COOKIES):
        return None
    if "HTTP_AUTHORIZATION" in request.META:
        return None
    try:
        host = request.get_host()
    except DisallowedHost:
        return None  # refused below, as it would be without this cache
    return (request.method, request.scheme or "", host, request.get_full_path())


def may_keep(response: HttpResponse) -> bool:
    if response.status_code != 200 or response.streaming or response.cookies:
        return False
    control = response.get("Cache-Control", "").lower()
    if any(word in control for word in _PRIVATE):
        return False
    varies = {header.lower() for header in cc_delim_re.split(response.get("Vary", "")) if header}
    return varies <= {"cookie"}


def forget() -> None:
    """Drop every kept page of this process (tests)."""
    pages.clear()


class MicrocacheMiddleware:
    """Answer an anonymous read from the page rendered for the same address less than
    ``MICROCACHE_SECONDS`` ago. Below the request id and metrics (a kept answer is counted
    and named like any other), above everything that reads the database."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        seconds = settings.MICROCACHE_SECONDS
        name = page_key(request) if seconds > 0 else None
        if name is None:
            return self.get_response(request)
        started = time.monotonic()
        found = pages.get(name)
        if found is not None and found.expires > started:
            request.microcached = True  # type: ignore[attr-defined]
            return found.response(started)
        response = self.get_response(request)
        if may_keep(response):
            kept = Page(
                started=started,
                expires=started + seconds,
                status=response.status_code,
                headers=tuple(response.items()),
                content=response.content,
            )
            pages.put(name, kept, len(kept.content))
        return response
