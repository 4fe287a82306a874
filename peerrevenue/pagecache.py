"""Whole-page caching for anonymous readers, invalidated by a generation number.

Anonymous readers of the same URL see the same bytes, so their pages can be served from the
cache (Redis when configured, shared by every web worker). Signed-in readers always get a fresh
render: their pages carry a CSRF token, their name and their watch state.

Anything that changes what a page shows (an ingest, a hidden paper, a watch, a term listed or
edited) calls ``invalidate_pages()``, which bumps the generation so that every cached page is
missed from then on; the old entries simply expire. Prices shown on hover may lag trades by at
most ``PAGE_CACHE_SECONDS``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.http import HttpRequest, HttpResponse

GENERATION_KEY = "pages:generation"


def pages_generation() -> int:
    generation = cache.get(GENERATION_KEY)
    if generation is None:
        # add() so that two workers starting at once agree on the first generation.
        cache.add(GENERATION_KEY, 1, timeout=None)
        generation = cache.get(GENERATION_KEY, 1)
    return generation


def invalidate_pages() -> None:
    """Bump the generation once the current transaction commits (now, outside one).

    After commit, so that no reader can cache a page rendered from the old rows in between.
    """

    def bump() -> None:
        try:
            cache.incr(GENERATION_KEY)
        except ValueError:
            cache.add(GENERATION_KEY, 2, timeout=None)

    transaction.on_commit(bump)


def is_cacheable_request(request: HttpRequest) -> bool:
    return (
        request.method in ("GET", "HEAD")
        and settings.SESSION_COOKIE_NAME not in request.COOKIES
        and "messages" not in request.COOKIES
    )


def cache_page_for_anonymous(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not is_cacheable_request(request):
            return view(request, *args, **kwargs)
        key = f"pages:{pages_generation()}:{request.get_full_path()}"
        cached = cache.get(key)
        if cached is not None:
            content, content_type = cached
            return HttpResponse(content, content_type=content_type)
        response = view(request, *args, **kwargs)
        if response.status_code == 200 and not response.cookies and not response.streaming:
            cache.set(
                key,
                (response.content, response["Content-Type"]),
                timeout=settings.PAGE_CACHE_SECONDS,
            )
        return response

    return wrapper
