"""Pieces of pages that every reader sees alike, kept until anything they show changes.

A signed-in reader's page is rendered for them (their name, their watch state, the CSRF token),
but most of it, e.g. a category's day of thirty typeset and highlighted abstracts, is the same
for everyone. Such a piece is rendered once per pages generation (``peerrevenue.pagecache``:
an ingest, a hidden or edited paper, a watch, a term listed, halted or edited all replace it)
and kept in the shared cache, for every worker, and in this process's memory. Unlike the page
cache this serves signed-in readers too, and the page around the piece is rendered per request.

What a piece shows must depend only on the values it varies on and on rows whose changes
invalidate the pages. Prices move with every trade without invalidating anything, so a piece
leaves its price titles open (``market.term_links.PageTerms(defer_prices=True)``) and the page
fills them per request.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from .lru import SizedLRU
from .pagecache import pages_generation

SHARED_SECONDS = 3600  # a piece of an old generation is never read again: let it go
LOCAL_CHARACTERS = 16_000_000  # per process: about a hundred category pages

# A piece: its HTML and whatever small values the page around it needs (a count, a model
# instance), which came from the same render and are as current.
Piece = tuple[str, dict[str, Any]]

_local: SizedLRU[Piece] = SizedLRU(LOCAL_CHARACTERS)

T = TypeVar("T")
# Small per-reader facts kept for a generation: (generation, *key) → (value,).
_facts: SizedLRU[tuple[Any]] = SizedLRU(200_000)


def kept_for_generation(key: tuple, compute: Callable[[], T]) -> T:
    """A small fact that changes only with rows whose changes invalidate the pages (whether a
    reader watches a category: a watch bumps the generation), worked out once per generation
    in this process instead of on every request. ``key`` must name everything it depends on
    besides those rows, e.g. ``("watching", user id, category id)``."""
    full = (pages_generation(), *key)
    found = _facts.get(full)
    if found is None:
        found = (compute(),)
        _facts.put(full, found, 1)
    return found[0]


def shared_piece(
    name: str,
    vary_on: Sequence[object],
    render: Callable[[], Piece],
    *,
    seconds: int = SHARED_SECONDS,
    local: bool = True,
) -> Piece:
    """The piece ``name`` for ``vary_on`` in the current pages generation; ``render()`` runs
    only when neither this process nor the shared cache has it.

    ``seconds`` bounds how long the shared cache keeps it: pieces whose key carries a time
    bucket or a version that moves often (market figures) need not outlive it by an hour.
    ``local=False`` keeps the piece out of this process's memory: one reader's own piece (a
    portfolio) would only push out the pieces every reader shares.
    """
    vary = hashlib.blake2b(repr(list(vary_on)).encode(), digest_size=16).hexdigest()
    key = f"pieces:{name}:{pages_generation()}:{vary}"
    piece = _local.get(key) if local else None
    if piece is None:
        piece = cache.get(key)
        if piece is None:
            piece = render()
            cache.set(key, piece, seconds)
        if local:
            _local.put(key, piece, len(piece[0]))
    return piece


# Where a piece's bytes go in a rendered page: random per process, so no text on the page (a
# search, a name) can contain it.
_SLOT = f"<!--kept piece {secrets.token_hex(8)}-->"
_SLOT_BYTES = _SLOT.encode()


def render_page(request: HttpRequest, template_name: str, context: dict) -> HttpResponse:
    """``django.shortcuts.render`` for a page that shows kept pieces. A piece comes ready as
    UTF-8 (``slot_for``) and goes into the response as it is: encoding its 170 kB of text on
    every request cost a tenth of a signed-in page."""
    pieces: list[bytes] = []
    # slot_for finds the list on the request it is given; HttpRequest declares no such field.
    request.kept_pieces = pieces  # type: ignore[attr-defined]
    try:
        response = render(request, template_name, context)
    finally:
        del request.kept_pieces  # type: ignore[attr-defined]
    if pieces:
        parts = response.content.split(_SLOT_BYTES)
        if len(parts) != len(pieces) + 1:
            raise AssertionError(f"{template_name} has {len(parts) - 1} slots for {len(pieces)}")
        joined = [parts[0]]
        for piece, after in zip(pieces, parts[1:], strict=True):
            joined += [piece, after]
        response.content = b"".join(joined)
    return response


def slot_for(request: HttpRequest, encoded: bytes) -> str | None:
    """A place in the page for ``encoded`` (HTML as UTF-8), filled by ``render_page``; None
    when the page is not rendered by it (then the caller puts in the text)."""
    pieces = getattr(request, "kept_pieces", None)
    if pieces is None:
        return None
    pieces.append(encoded)
    return _SLOT


def forget_local_pieces() -> None:
    """Drop this process's pieces (tests clear the shared cache between cases)."""
    _local.clear()
    _facts.clear()
