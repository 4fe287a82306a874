"""Proving kept values fresh: with ``settings.KEEP_VERIFY`` (on for the test suite, off in
production) every kept value ``peerrevenue.keep`` hands out is also made afresh, with nothing
kept (nested pieces, fills, whole pages), and a difference raises ``Stale`` naming the key, the
piece and the first difference: a key that leaves out something its render reads fails the
test that reads the page.

The fresh render's queries are taken back out of Django's query log, so query budgets count
only what the page costs with the check off.
"""

from __future__ import annotations

import contextvars
import pprint
import re
from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from django.conf import settings
from django.db import connections

T = TypeVar("T")


class Stale(AssertionError):
    """A kept value differs from what its render makes now: its key leaves out something the
    render reads."""


# Set while a value is made afresh to check a kept one: nothing is read from or written to
# either level then, so everything the fresh value is made of is made too.
_making: contextvars.ContextVar[bool] = contextvars.ContextVar("kept_made_afresh", default=False)


def checking() -> bool:
    """Whether what runs now is the freshness check's render, not the site's (for tests that
    count the site's renders)."""
    return _making.get()


def verifying() -> bool:
    return bool(getattr(settings, "KEEP_VERIFY", False)) and not _making.get()


@contextmanager
def made_afresh() -> Iterator[None]:
    """Nothing kept is used inside, and the queries made inside are taken back out of each
    connection's query log: the check must not count against a page's query budget
    (``CaptureQueriesContext`` reads the log when it exits, after this has trimmed it)."""
    logged = {alias: len(connections[alias].queries_log) for alias in connections}
    token = _making.set(True)
    try:
        yield
    finally:
        _making.reset(token)
        for alias, length in logged.items():
            log = connections[alias].queries_log
            while len(log) > length:
                log.pop()


def _piece_name(name: Hashable) -> str:
    if isinstance(name, str) and name.startswith("kept:"):
        return name.split(":")[2]
    return str(name[0]) if isinstance(name, tuple) and name else repr(name)


def _text(value: object) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    if isinstance(value, str):
        return value
    return pprint.pformat(value, width=100)


def first_difference(kept: object, fresh: object, *, around: int = 120) -> str:
    """Where ``kept`` and ``fresh`` (texts, or anything ``pprint`` shows) first differ, with
    some context on each side."""
    a, b = _text(kept), _text(fresh)
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    start = max(0, at - around)
    return (
        f"first difference at character {at} of {len(a)} kept / {len(b)} fresh:\n"
        f"  kept:  …{a[start : at + around]!r}…\n"
        f"  fresh: …{b[start : at + around]!r}…"
    )


# What differs on every render by design: a CSRF token is masked afresh each time it is shown,
# and a trade form carries a new idempotency key (a second submission must not trade twice).
# Split with it, a page is its text around (attribute name, value) pairs.
PER_RENDER = re.compile(rb'name="(csrfmiddlewaretoken|key)" value="([^"]*)"')


def per_render_removed(value: T) -> T:
    """``value`` (a page's bytes, a text, or a tuple of them) without what each render makes
    anew."""
    if isinstance(value, bytes):
        return PER_RENDER.sub(rb'name="\1" value=""', value)  # type: ignore[return-value]
    if isinstance(value, str):
        return PER_RENDER.sub(rb'name="\1" value=""', value.encode()).decode()  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(per_render_removed(part) for part in value)  # type: ignore[return-value]
    return value


def check(name: Hashable, kept: object, fresh: object) -> None:
    if kept != fresh and per_render_removed(kept) != per_render_removed(fresh):
        kept, fresh = per_render_removed(kept), per_render_removed(fresh)
        raise Stale(
            f"kept {_piece_name(name)!r} under {name!r} is stale: " + first_difference(kept, fresh)
        )
