"""Facts: the small values a kept page is keyed by, read from the database on every request,
all in one statement (``read``).

A fact is a row's stamp (``papers_category.stamp``, ``market_term.stamp``…), a named stamp
(``kept_stamp``: the term set, mentions…) or a count. Triggers give a row a new stamp from one
sequence whenever it, or anything it shows, changes, so a change made by
``QuerySet.update()``, in the admin, by an ingest or by a management command moves the stamp
with no call to remember. Apps offer the facts they own (``fact``); a few are read for every
kept page (``every_page=True``: the term set, which highlighting shows everywhere, and the
prices that fill its holes).

A fact about the reader (do they watch this category?) takes ``READER`` for the reader's id.
A signed-in page whose session is not loaded yet then reads the session, its user and the
facts in one statement (the session store's ``load_alongside``): on a busy machine a round
trip costs more than the Python around it, and these two are on every signed-in page.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest

from . import replicas
from .db import prepared_rows


@dataclass(frozen=True, slots=True)
class _Fact:
    name: str
    sql: str  # a scalar subquery, with one %s per argument
    arguments: int
    every_page: bool


_facts: dict[str, _Fact] = {}
_every_page: list[tuple[str]] = []


class _Reader:
    def __repr__(self) -> str:
        return "READER"


# An argument standing for the signed-in reader's id (None for nobody): ``read`` puts the id in
# its place, and the facts it returns are under the id, as if the caller had given it.
READER: Any = _Reader()


def fact(name: str, sql: str, *, arguments: int = 0, every_page: bool = False) -> None:
    """Offer the fact ``name``: ``sql`` is a query of one value (one row, one column) with
    ``arguments`` placeholders. Registered once, by the app that owns the rows (its
    ``AppConfig.ready``)."""
    _facts[name] = _Fact(name, sql, arguments, every_page)
    _every_page[:] = [(name,) for name, f in _facts.items() if f.every_page]


def arguments_of(name: str) -> int:
    """How many arguments the fact ``name`` takes."""
    return _facts[name].arguments


@dataclass(frozen=True, slots=True)
class Facts:
    """The facts one request read, by name (with its arguments, for those that take some)."""

    values: Mapping[tuple[object, ...], object]

    def __getitem__(self, wanted: str | tuple[object, ...]) -> Any:
        return self.values[wanted if isinstance(wanted, tuple) else (wanted,)]

    def key_parts(self) -> tuple[object, ...]:
        # In the order asked: the same for every request of a view (its own, then the
        # every-page facts in the order the apps offered them).
        return tuple(self.values.items())


class SessionAlongside(Protocol):
    """A session store that can load itself in the statement that reads the facts
    (``accounts.sessions.SessionStore``)."""

    reader_sql: str  # its user's id, as an expression of that statement

    def load_alongside(
        self, selects: Sequence[str], params: Sequence[object], *, using: BaseDatabaseWrapper
    ) -> tuple[Any, ...] | None: ...


def read(request: HttpRequest | None, *wanted: str | tuple[object, ...]) -> Facts:
    """The facts asked for, plus every every-page fact, in one round trip; kept on the
    request for the fillers (``facts_of``).

    ``read(("category", "cs.DC"), ("watching", "cs.DC", READER))``: a name alone, or a name
    with its arguments. Read them *before* the rows a piece shows (the render reads those
    after): a change committed in between is then at worst kept under the old key, which
    nobody asks for once the fact has moved.
    """
    asked = [(w,) if isinstance(w, str) else tuple(w) for w in wanted]
    asked += [item for item in _every_page if item not in asked]
    about_reader = any(READER in item for item in asked)
    # A reader page's facts come from where its other reads do (peerrevenue.replicas).
    connection = replicas.reading_connection()
    along = _read_with_session(request, asked, connection) if request is not None else None
    # Only now: asking who the reader is loads the session, which the statement above did.
    reader = _reader_id(request) if about_reader else None
    if along is not None and (not about_reader or along[0] == reader):
        row = along[1]
    else:
        # Also where the session named a user whom Django then did not sign in (deactivated,
        # or signed out by a password change): its facts about "the reader" were about them.
        selects, params = _selects(asked, reader_sql="%s", reader=reader)
        # Planning a handful of subqueries costs Postgres more than running them, and every
        # page asks it: prepared where the connection may keep a statement (``prepared_rows``).
        (row,) = prepared_rows("SELECT " + ", ".join(selects), params, using=connection)
    named = [tuple(reader if part is READER else part for part in item) for item in asked]
    facts = Facts(dict(zip(named, row, strict=True)))
    if request is not None:
        request.kept_facts = facts  # type: ignore[attr-defined]
    return facts


def _read_with_session(
    request: HttpRequest, asked: list[tuple[object, ...]], connection: BaseDatabaseWrapper
) -> tuple[object, tuple[Any, ...]] | None:
    """The id of the session's user and the facts, read in the statement that loads the
    request's session, or None where the session is loaded already, has nothing to load or
    lives in another database."""
    session = getattr(request, "session", None)
    if not callable(getattr(session, "load_alongside", None)):
        return None
    alongside: SessionAlongside = session  # type: ignore[assignment]
    selects, params = _selects(asked, reader_sql=alongside.reader_sql, reader=None)
    found = alongside.load_alongside([alongside.reader_sql, *selects], params, using=connection)
    if found is None:
        return None
    reader_id, *row = found
    return reader_id, tuple(row)


def _selects(
    asked: list[tuple[object, ...]], *, reader_sql: str, reader: object
) -> tuple[tuple[str, ...], list[object]]:
    shape = tuple(
        (_facts[str(name)], tuple(a is READER for a in arguments)) for name, *arguments in asked
    )
    params: list[object] = []
    for _name, *arguments in asked:
        for argument in arguments:
            if argument is not READER:
                params.append(argument)
            elif reader_sql == "%s":
                params.append(reader)
    return _sql_of(shape, reader_sql), params


@functools.lru_cache(maxsize=1024)
def _sql_of(shape: tuple[tuple[_Fact, tuple[bool, ...]], ...], reader_sql: str) -> tuple[str, ...]:
    """The subqueries of facts of this shape (each fact, and which of its arguments is the
    reader): made once, as a page asks the same facts on every request."""
    selects = []
    for spec, readers in shape:
        if len(readers) != spec.arguments:
            raise TypeError(f"fact {spec.name!r} takes {spec.arguments} argument(s)")
        pieces = spec.sql.split("%s")
        sql = [pieces[0]]
        for is_reader, piece in zip(readers, pieces[1:], strict=True):
            sql += (reader_sql if is_reader else "%s", piece)
        selects.append(f"({''.join(sql)})")
    return tuple(selects)


def _reader_id(request: HttpRequest | None) -> object:
    user = getattr(request, "user", None)
    return user.pk if user is not None and user.is_authenticated else None


def facts_of(request: HttpRequest) -> Facts:
    """The facts this request has read, or (for a page that read none) the every-page ones."""
    found = getattr(request, "kept_facts", None)
    return found if found is not None else read(request)
