"""Whole-page caching for anonymous readers, invalidated by a generation token.

Anonymous readers of the same URL see the same bytes, so their pages can be served from the
cache (Redis when configured, shared by every web worker). Signed-in readers always get a fresh
render: their pages carry a CSRF token, their name and their watch state.

Two layers: the shared cache holds every rendered page for all workers, and each process keeps
its most recent pages in memory too. ``PageCacheMiddleware`` answers from that memory before
sessions, authentication and CSRF run, so a hot page costs little more than a static file.

Anything that changes what a page shows (an ingest, a hidden paper, a watch, a term listed or
edited) calls ``invalidate_pages()``, which replaces the generation so that every cached page
is missed from then on (in other processes within ``GENERATION_RECHECK_SECONDS``); the old
entries simply expire. Prices shown on hover may lag trades by at most ``PAGE_CACHE_SECONDS``.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse

from .tokens import current_token, replace_token

GENERATION_KEY = "pages:generation"
LOCAL_PAGES = 256  # per process; a category page is ~150 kB, so at most ~40 MB


class _LocalPages:
    """A small LRU of (generation, expiry, content, content type) by URL, for this process."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pages: OrderedDict[str, tuple[str, float, bytes, str]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, path: str, generation: str) -> tuple[bytes, str] | None:
        with self.lock:
            entry = self.pages.get(path)
            if entry is None or entry[0] != generation or entry[1] < time.monotonic():
                return None
            self.pages.move_to_end(path)
            return entry[2], entry[3]

    def put(self, path: str, generation: str, content: bytes, content_type: str) -> None:
        expires = time.monotonic() + settings.PAGE_CACHE_SECONDS
        with self.lock:
            self.pages[path] = (generation, expires, content, content_type)
            self.pages.move_to_end(path)
            while len(self.pages) > self.size:
                self.pages.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.pages.clear()


local_pages = _LocalPages(LOCAL_PAGES)


# Each process re-reads the generation at most this often. Another process's invalidation
# (an ingest in the Celery worker, an edit in another web worker) shows within this delay, a
# quarter of a second, which no reader can beat; the process that invalidates sees it at once.
# The cost is one small cache read per process four times a second.
GENERATION_RECHECK_SECONDS = 0.25
_generation_seen: tuple[str, float] | None = None


def pages_generation() -> str:
    """A random token, replaced on every invalidation (and if the cache ever loses it, so a
    restarted or flushed Redis can never make old pages current again)."""
    global _generation_seen
    seen = _generation_seen
    now = time.monotonic()
    if seen is not None and now - seen[1] < GENERATION_RECHECK_SECONDS:
        return seen[0]
    generation = current_token(GENERATION_KEY)
    _generation_seen = (generation, now)
    return generation


def forget_generation() -> None:
    """Make the next request re-read the generation (tests clear the cache between cases)."""
    global _generation_seen
    _generation_seen = None


def invalidate_pages() -> None:
    """Replace the generation now, and again once the current transaction commits.

    Now, so that this transaction's own later reads never see an old page; after the commit
    too, because a reader in between could have cached a page rendered from the old rows under
    the first new generation.
    """

    def bump() -> None:
        global _generation_seen
        _generation_seen = (replace_token(GENERATION_KEY), time.monotonic())

    bump()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(bump)


def _cached_response(content: bytes, content_type: str) -> HttpResponse:
    response = HttpResponse(content, content_type=content_type)
    # Signed-in readers see another page at the same URL: no shared HTTP cache may mix them.
    response["Vary"] = "Cookie"
    return response


def is_cacheable_request(request: HttpRequest) -> bool:
    return (
        request.method in ("GET", "HEAD")
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def cache_page_for_anonymous(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not is_cacheable_request(request) or settings.PAGE_CACHE_SECONDS <= 0:
            return view(request, *args, **kwargs)
        path = request.get_full_path()
        generation = pages_generation()
        # Hashed: a URL can be longer (and stranger) than a cache key may be.
        key = f"pages:{generation}:{hashlib.sha256(path.encode()).hexdigest()}"
        cached = cache.get(key)
        if cached is not None:
            local_pages.put(path, generation, *cached)
            return _cached_response(*cached)
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.cookies and not response.streaming:
            page = (response.content, response["Content-Type"])
            cache.set(key, page, timeout=settings.PAGE_CACHE_SECONDS)
            local_pages.put(path, generation, *page)
        return response

    return wrapper


# Set on the response to a request that changed what pages show (a watch, an edit in the
# admin): the reader's next requests re-read the generation at once, whichever worker serves
# them, so that one's own change never shows late, even by the recheck delay.
CHANGED_COOKIE = "pages-changed"
CHANGED_COOKIE_SECONDS = 5


class PageCacheMiddleware:
    """Answer anonymous requests for pages this process rendered or fetched recently.

    Only paths that a ``cache_page_for_anonymous`` view stored are ever in memory, and only
    for the current generation, so this cannot serve anything the view would not.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if CHANGED_COOKIE in request.COOKIES:
            forget_generation()
        if is_cacheable_request(request) and local_pages.pages:
            # CommonMiddleware, further in, checks the host; a page from memory must not skip
            # it. DisallowedHost becomes the same 400 as there.
            request.get_host()
            page = local_pages.get(request.get_full_path(), pages_generation())
            if page is not None:
                return _cached_response(*page)
        seen = _generation_seen
        response = self.get_response(request)
        if request.method not in ("GET", "HEAD") and _generation_seen is not seen:
            response.set_cookie(
                CHANGED_COOKIE,
                "1",
                max_age=CHANGED_COOKIE_SECONDS,
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response
