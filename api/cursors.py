"""Opaque cursors for pagination in a stable order.

A cursor is the sort key of the last item a page gave (keyset pagination: a page after it
starts strictly after that key, so rows added meanwhile neither repeat nor skip), as base64
JSON. The client passes it back untouched; anything else is a clear 400.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from .problems import Problem

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

MAX_LIMIT = 100
DEFAULT_LIMIT = 50
BAD_CURSOR = "That cursor was not made here; pass back a next_cursor exactly as given."


def encode(key: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(key, separators=(",", ":")).encode()).decode()


def decode(cursor: str | None, *, kinds: tuple[type, ...]) -> list[Any] | None:
    """The key in ``cursor`` (None for the first page), each part of the type in ``kinds``."""
    if not cursor:
        return None
    try:
        key = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
    except (ValueError, UnicodeError, binascii.Error):
        raise Problem(400, BAD_CURSOR) from None
    if not isinstance(key, list) or len(key) != len(kinds):
        raise Problem(400, BAD_CURSOR)
    for part, kind in zip(key, kinds, strict=True):
        if type(part) is not kind:
            raise Problem(400, BAD_CURSOR)
        if isinstance(part, int) and not -(2**62) < part < 2**62:
            raise Problem(400, BAD_CURSOR)
    return key


def limit_of(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise Problem(400, f"limit must be from 1 to {MAX_LIMIT} (got {limit}).")
    return limit


class Sliceable(Protocol[T_co]):
    """What a page is read from: an ordered QuerySet (a slice is a LIMIT) or a list."""

    def __getitem__(self, window: slice, /) -> Iterable[T_co]: ...


def page(
    rows: Sliceable[T], count: int, key: Callable[[T], list[Any]]
) -> tuple[list[T], str | None]:
    """The first ``count`` of ``rows`` (ordered, and already past the cursor it came with) and
    the cursor for the page after them: ``key`` of the last one shown, or None when no row
    follows. One row more than shown is read to tell."""
    found = list(rows[: count + 1])
    shown = found[:count]
    return shown, encode(key(shown[-1])) if len(found) > count else None
