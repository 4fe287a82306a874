"""Conditional reads: an ETag and a Last-Modified from the stamps the pages use, and the
body kept under them (peerrevenue.keep), so a poller that has the current answer gets a 304
after one small query, and one that has not gets the kept body.

The ETag is a digest of the release's code, the URL (path and query) and the facts the
answer shows, so it moves exactly when the page built from the same facts would. Stamps are
numbers, not times, so Last-Modified is the moment an answer with this ETag was first given:
remembered in the shared cache (``add``, so every instance agrees on the first). Should the
cache have lost it, the answer is dated now: a client then fetches once more, never less.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.http import http_date, parse_http_date_safe, quote_etag
from pydantic import BaseModel

from peerrevenue import keep
from peerrevenue.lru import SizedLRU

SEEN_SECONDS = 7 * 24 * 3600


def etag_of(request: HttpRequest, parts: tuple[object, ...]) -> str:
    text = repr((keep.CODE, request.path, sorted(request.GET.lists()), parts))
    return quote_etag(hashlib.blake2b(text.encode(), digest_size=12).hexdigest())


# An ETag's first sighting never changes once the shared cache holds it, so this process
# remembers the ones it has looked up: a poller's request then makes no cache round trip.
_seen_here: SizedLRU[int] = SizedLRU(20_000)


def forget() -> None:
    """Drop this process's memory of first sightings (tests clear the shared cache)."""
    _seen_here.clear()


def first_seen(etag: str) -> int:
    known = _seen_here.get(etag)
    if known is not None:
        return known
    seen = _first_seen_shared(etag)
    _seen_here.put(etag, seen, 1)
    return seen


def _first_seen_shared(etag: str) -> int:
    name = f"api-seen:{etag}"
    # A read first: after its first answer an ETag is asked for again and again (pollers),
    # and a read is cheaper than an add that fails, most of all with the database as cache.
    seen = cache.get(name)
    if isinstance(seen, int):
        return seen
    now = int(time.time())
    if cache.add(name, now, timeout=SEEN_SECONDS):
        return now
    seen = cache.get(name)
    return seen if isinstance(seen, int) else now


def _matches(request: HttpRequest, etag: str, modified: int) -> bool:
    wanted = request.headers.get("If-None-Match")
    if wanted is not None:
        # Weak comparison (RFC 9110, 13.1.2): W/"x" and "x" name the same answer.
        tags = {tag.strip().removeprefix("W/") for tag in wanted.split(",")}
        return "*" in tags or etag in tags
    since = parse_http_date_safe(request.headers.get("If-Modified-Since", ""))
    return since is not None and modified <= since


def respond(
    request: HttpRequest,
    *,
    name: str,
    parts: tuple[object, ...],
    make: Callable[[], BaseModel],
) -> HttpResponse:
    """The answer ``make()`` gives, for the facts ``parts`` it shows: a 304 when the client
    holds it, else its JSON, kept under the facts."""
    etag = etag_of(request, parts)
    modified = first_seen(etag)
    if _matches(request, etag, modified):
        answer = HttpResponse(status=304)
    else:
        body = keep.get_or_make(
            keep.key("api", name, request.path, sorted(request.GET.lists()), parts),
            lambda: make().model_dump_json(by_alias=True).encode(),
            size=len,
        )
        answer = HttpResponse(body, content_type="application/json")
    answer["ETag"] = etag
    answer["Last-Modified"] = http_date(modified)
    # Anyone may keep it, but must ask again before using it: the ETag makes that cheap.
    answer["Cache-Control"] = "public, no-cache"
    return answer


def private(model: BaseModel) -> HttpResponse:
    """A reader's own answer (their orders, their library): never kept by anyone else."""
    answer = HttpResponse(model.model_dump_json(by_alias=True), content_type="application/json")
    answer["Cache-Control"] = "private, no-store"
    return answer
