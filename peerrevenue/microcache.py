"""Whole anonymous pages kept for at most a second in this process ("microcaching").

Every anonymous page is right as of the request that rendered it (its facts are read from the
database, ``peerrevenue.keep``); a hundred anonymous readers a second of one page would each pay
that read. ``Microcache`` wraps the site's WSGI application (``peerrevenue/wsgi.py``) and answers
them from the page this process rendered less than ``settings.MICROCACHE_SECONDS`` ago instead,
before Django builds a request, as a caching proxy in front of the site would. So a change shows
to anonymous readers within that time on every process, and at once to signed-in readers, who
are never answered from here.

What is kept, and for whom:

- only a GET or HEAD with no cookie but the CSRF one (no session, no messages, no
  ``pr_written``: a client that just wrote must read its write) and no ``Authorization``, for
  its method, scheme, host header and full path;
- only a 200 that sets no cookie, streams nothing, says nothing private (``Cache-Control``
  ``private``, ``no-cache`` or ``no-store``) and varies on nothing but the cookie. A foreign
  host is refused by Django (400), so it is never kept: a host is answered from here only if
  Django accepted it;
- until ``MICROCACHE_SECONDS`` after the request *started*, not after it was rendered: a write
  committed after the render's reads began is then shown by any request that starts at most
  that long after the write.

A kept answer carries its own request id (``X-Request-ID``) and its ``Age``, and is counted in
the metrics under the view name ``microcache``. Nothing is shared between processes and nothing
is invalidated: an entry simply ends. ``MICROCACHE_SECONDS = 0`` turns it off. Django's test
client calls the handler, not this, so the test suite reads its own writes at once;
``tests/test_microcache.py`` calls the WSGI application.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from django.http.cookie import parse_cookie
from django.utils.cache import cc_delim_re

from . import metrics, requestlog
from .lru import SizedLRU

BUDGET = 16_000_000  # bytes per process: about a hundred category pages
_PRIVATE = ("private", "no-cache", "no-store")
_PER_ANSWER = {requestlog.HEADER.lower(), "age"}  # written afresh on each answer

Headers = list[tuple[str, str]]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[dict[str, Any], StartResponse], Iterable[bytes]]


@dataclass(frozen=True, slots=True)
class Page:
    started: float  # time.monotonic() when the request that rendered it started
    expires: float
    status: str
    headers: tuple[tuple[str, str], ...]
    content: bytes


pages: SizedLRU[Page] = SizedLRU(BUDGET)
# The answers given from here, counted as a view of their own (its series made once: a
# label lookup per answer would cost more than the rest of one).
answered_here = metrics.RESPONSES.labels("microcache", "200")


def forget() -> None:
    """Drop every kept page of this process (tests)."""
    pages.clear()


def page_key(environ: dict[str, Any]) -> tuple[str, ...] | None:
    """What the page for this request is kept under, or ``None`` if it may not be kept: a
    reader with a session, messages or a write to read back gets their own render."""
    method = environ.get("REQUEST_METHOD", "")
    if method not in ("GET", "HEAD") or "HTTP_AUTHORIZATION" in environ:
        return None
    cookie = environ.get("HTTP_COOKIE")
    if cookie and any(name != settings.CSRF_COOKIE_NAME for name in parse_cookie(cookie)):
        return None
    proxy = settings.SECURE_PROXY_SSL_HEADER
    return (
        method,
        environ.get("wsgi.url_scheme", ""),
        environ.get(proxy[0], "") if proxy else "",
        environ.get("HTTP_HOST") or f"{environ.get('SERVER_NAME')}:{environ.get('SERVER_PORT')}",
        environ.get("SCRIPT_NAME", ""),
        environ.get("PATH_INFO", ""),
        environ.get("QUERY_STRING", ""),
    )


def may_keep(status: str, headers: Headers) -> bool:
    if not status.startswith("200"):
        return False
    named = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            return False
        named[name.lower()] = value
    if any(word in named.get("cache-control", "").lower() for word in _PRIVATE):
        return False
    varies = {header.lower() for header in cc_delim_re.split(named.get("vary", "")) if header}
    return varies <= {"cookie"}


class Microcache:
    """The site's WSGI application with anonymous reads answered from the page rendered for
    the same address less than ``MICROCACHE_SECONDS`` ago."""

    def __init__(self, application: WSGIApp) -> None:
        self.application = application

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        seconds = settings.MICROCACHE_SECONDS
        name = page_key(environ) if seconds > 0 else None
        if name is None:
            return self.application(environ, start_response)
        started = time.monotonic()
        found = pages.get(name)
        if found is not None and found.expires > started:
            start_response(
                found.status,
                [
                    *found.headers,
                    # How old the answer is, as any HTTP cache says it (RFC 9111, 5.1).
                    ("Age", str(int(started - found.started))),
                    (requestlog.HEADER, requestlog.request_id_of(environ)),
                ],
            )
            answered_here.inc()
            return [found.content]
        answered: dict[str, Any] = {}

        def keeping_start_response(status: str, headers: Headers, *rest: Any) -> Any:
            answered.update(status=status, headers=headers)
            return start_response(status, headers, *rest)

        result = self.application(environ, keeping_start_response)
        # Only a whole response in memory (not a file, not a stream) is kept.
        if not isinstance(result, HttpResponse) or not may_keep(**answered):
            return result
        content = result.content
        page = Page(
            started=started,
            expires=started + seconds,
            status=answered["status"],
            headers=tuple((k, v) for k, v in answered["headers"] if k.lower() not in _PER_ANSWER),
            content=content,
        )
        pages.put(name, page, len(content))
        return result
