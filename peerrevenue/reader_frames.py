"""A signed-in reader's own render of a page's template around its kept pieces, kept in this
process for that reader (``keep.respond(..., per_reader=True)``), and the reader's whole page
(``page``, through ``keep.whole_page``).

Around the pieces, a page such as the category page shows nothing of the request but the
reader's name, the URL, the messages and the CSRF token, and the view's context values (their
watch, the watchers). So for a signed-in reader's GET that render is kept here, under
everything it shows, with a place for the token that each response fills with a token masked
afresh (``Token``), as Django masks one per response against BREACH.

The whole page is kept under the URL, the reader, the facts the request read (and the pages'
clocks) and the versions of the fillers that filled its holes, each asked again on every use:
a trade, a comment or the minute that closes an edit window moves one of those. Each response
puts a freshly masked CSRF token in every form and a fresh one-time key in every form that
carries one, so two tabs of the same page never send one key for two different trades.

Apart from ``keep``'s in-process entries, whose every one is the same for every reader
(tests/test_keep.py holds them to that), and never in the shared cache. Nothing is
invalidated: a reader's own change (a watch) moves a context value, so their next request asks
for another entry. With ``KEEP_VERIFY`` every use is compared with a fresh render.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import os
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH, get_token

from . import freshness
from .lru import SizedLRU

# Stands for the request's CSRF token in a kept render (secret per deployment, like keep's
# slots); each response puts its own masked token in its place.
CSRF_PLACE = hmac.new(settings.SECRET_KEY.encode(), b"reader-csrf", "sha256").hexdigest()[:32]
_CSRF_PLACE_BYTES = CSRF_PLACE.encode()
# A few kB a reader and page.
CHARACTERS = 8_000_000
_frames: SizedLRU[tuple[str, ...]] = SizedLRU(CHARACTERS)
# Whole pages: a 500-comment thread is half a megabyte a reader.
PAGE_BYTES = 64_000_000
# Values whose repr tells apart every pair that renders differently (with their type's name:
# a SafeString and a str of the same text do not).
_KEYABLE = (str, int, float, type(None), dt.date)


def forget() -> None:
    """Drop this process's entries (tests clear the caches between cases)."""
    _frames.clear()
    _pages.clear()


def kept(
    request: HttpRequest,
    template_name: str,
    context: Mapping[str, Any],
    pieces: list[str],
    *,
    render: Callable[[], tuple[str, ...]],
) -> tuple[str, ...] | None:
    """``render()`` (the template around the ``pieces``, with ``CSRF_PLACE`` for the token),
    kept for this reader under the template, the reader, the URL and the context's values
    but the pieces. ``None`` (render afresh) for anyone else, for a reader with messages to
    show (shown once, so never kept) and for a context value whose repr might hide a
    difference."""
    from django.contrib.messages import get_messages

    user = getattr(request, "user", None)
    if request.method not in ("GET", "HEAD") or user is None or not user.is_authenticated:
        return None
    if len(get_messages(request)):
        return None
    shown = []
    for name, value in context.items():
        if name in pieces:
            continue
        if not isinstance(value, _KEYABLE):
            return None
        shown.append((name, type(value).__name__, value))
    parts = (template_name, user.pk, user.get_username(), request.get_full_path())
    digest = hashlib.blake2b(repr((parts, sorted(shown, key=repr))).encode(), digest_size=16)
    name = f"reader-page:{digest.hexdigest()}"
    if freshness.checking():
        return render()
    found = _frames.get(name)
    if found is None:
        found = render()
        _frames.put(name, found, sum(map(len, found)))
    elif freshness.verifying():
        with freshness.made_afresh():
            freshness.check(name, found, render())
    return found


class Token:
    """The request's CSRF token, put in every place of a kept render: made once per request,
    as the template's lazy ``csrf_token`` is."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        self.token = b""

    def put(self, part: bytes) -> bytes:
        if _CSRF_PLACE_BYTES not in part:
            return part
        if not self.token:
            self.token = masked_token(self.request).encode()
        return part.replace(_CSRF_PLACE_BYTES, self.token)


_CHARS = CSRF_ALLOWED_CHARS
_INDEX = {char: index for index, char in enumerate(_CHARS)}
# A random byte below this is a mask character (its remainder by the alphabet's length), and
# one at or above it is dropped, so every character of the mask is equally likely.
_FAIR = 256 - 256 % len(_CHARS)
_MASK_CHARACTERS = bytes(ord(_CHARS[byte % len(_CHARS)]) for byte in range(256))
_UNFAIR = bytes(range(_FAIR, 256))


def masked_token(request: HttpRequest, *, renew: bool = True) -> str:
    """A masked token for the reader's CSRF secret, as ``django.middleware.csrf.get_token``
    makes one, its mask drawn from one read of the system's randomness: Django reads it once
    for each of the mask's 32 characters, nearly a tenth of a signed-in category page.

    ``renew``: send the cookie again, as get_token does, to restart its year. A page made
    afresh does; a reader's kept page (``page``) does not: it is made again whenever what it
    shows moves, which renews the cookie long before its year is out, and a cookie that did
    run out is made anew by the next page, as for a first visit."""
    secret = request.META.get("CSRF_COOKIE")
    if not isinstance(secret, str) or len(secret) != CSRF_SECRET_LENGTH:
        return get_token(request)  # no cookie yet: Django makes and sets one
    if renew:
        request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True
    mask = b""
    while len(mask) < CSRF_SECRET_LENGTH:
        mask += os.urandom(48).translate(_MASK_CHARACTERS, _UNFAIR)
    drawn = mask[:CSRF_SECRET_LENGTH].decode()
    cipher = (
        _CHARS[(_INDEX[char] + _INDEX[m]) % len(_CHARS)]
        for char, m in zip(secret, drawn, strict=True)
    )
    return drawn + "".join(cipher)


@dataclass(frozen=True, slots=True)
class _Page:
    """A reader's page as kept: its bytes around each form's CSRF token and one-time key."""

    # Runs of parts to be joined with the response's token, one run before each form with a
    # one-time key and one after the last; each part but the last ends in a place's
    # ``value="``.
    runs: tuple[tuple[bytes, ...], ...]
    content_type: str
    fillers: tuple[tuple[str, str], ...]  # (kind, version) of each filler of its holes

    def __len__(self) -> int:
        return sum(len(part) for run in self.runs for part in run)


_pages: SizedLRU[_Page] = SizedLRU(PAGE_BYTES)


def page(
    request: HttpRequest,
    facts_key: tuple[object, ...],
    make: Callable[[], HttpResponse],
    *,
    versions: Callable[[Iterable[str]], tuple[tuple[str, str], ...]],
) -> HttpResponse:
    """The reader's whole page, kept in this process under the URL, the reader and
    ``facts_key`` (the facts read, the clocks), used while ``versions(kinds)`` (the fillers'
    versions now) says what it did when the page was made. ``make()`` for anyone else: not
    signed in, with messages to show, or a page made with a cookie or not by
    ``keep.respond``."""
    from django.contrib.messages import get_messages

    user = getattr(request, "user", None)
    if (
        request.method not in ("GET", "HEAD")
        or user is None
        or not user.is_authenticated
        or freshness.checking()
        or len(get_messages(request))
    ):
        return make()
    parts = (request.get_full_path(), user.pk, user.get_username(), facts_key)
    name = _name(parts)
    found = _pages.get(name)
    if found is not None and versions(kind for kind, _ in found.fillers) == found.fillers:
        response = _respond(request, found)
        if freshness.verifying():
            with freshness.made_afresh():
                fresh = make()
            freshness.check(("reader-page", *parts), response.content, fresh.content)
        return response
    response = make()
    fillers = getattr(response, "fill_versions", None)
    if (
        fillers is not None
        and response.status_code == 200
        and not response.cookies
        and not response.streaming
    ):
        split = freshness.PER_RENDER.split(response.content)
        texts, kinds = split[::3], split[1::3]
        pieces = [
            (b'"' if place else b"")
            + text
            + (b'name="%s" value="' % kinds[place] if place < len(kinds) else b"")
            for place, text in enumerate(texts)
        ]
        keys = [place + 1 for place, kind in enumerate(kinds) if kind == b"key"]
        kept = _Page(
            runs=tuple(
                tuple(pieces[start:end])
                for start, end in zip([0, *keys], [*keys, len(pieces)], strict=True)
            ),
            content_type=response["Content-Type"],
            fillers=fillers,
        )
        _pages.put(name, kept, len(kept))
    return response


def _name(parts: tuple[object, ...]) -> Hashable:
    """``parts`` as they are, when every fact in them can be a dictionary key (numbers, text,
    dates: a fact has one type); else a digest of their repr (a fact of JSON, a list)."""
    try:
        hash(parts)
    except TypeError:
        return hashlib.blake2b(repr(parts).encode(), digest_size=16).digest()
    return parts


def _respond(request: HttpRequest, kept: _Page) -> HttpResponse:
    token = masked_token(request, renew=False).encode()
    first, *rest = kept.runs
    out = [token.join(first)]
    if rest:
        # A key for each form that has one, unique to this response: a random part and the
        # form's place.
        fresh = os.urandom(12).hex()
        for place, run in enumerate(rest):
            out += (f"{fresh}{place:08x}".encode(), token.join(run))
    response = HttpResponse(b"".join(out), content_type=kept.content_type)
    response.holes_filled = True  # type: ignore[attr-defined]
    return response
