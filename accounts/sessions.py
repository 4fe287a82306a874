"""Sessions in PostgreSQL, read in one statement with the user they sign in and their news.

Before its view runs, a signed-in page needs its session, the user the session names and
whether that user has something untold (an order filled, a proposal listed). Read apart they
were three round trips (the session and a news flag from Redis, the user from the database),
and on a busy machine each round trip costs more than the Python around it: the process waits
for another one to be scheduled. The session row keeps its user's id (``Session.user``), so one
statement reads all three, and the news is the rows themselves (two probes of partial
indexes), not a flag every writer of a notice must remember to set.

What the statement read of the user is handed to ``accounts.backends.UserBackend`` through
``offer_user_row``, once: Django's own ``auth.get_user`` still checks the session's hash
against the user's password, as for any backend.

Sessions are read where the router says (``peerrevenue.replicas``: the primary, which a login a
moment ago wrote to, or a replica while the primary is unreachable) and written to the primary.
Redis holds none of them, so a flushed or restarted Redis signs nobody out.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Sequence
from typing import Any

from django.contrib.auth import SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore as DBStore
from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

from market.notices import news_sql
from peerrevenue.db import prepared_rows

from .backends import OfferedRow, offer_user_row, user_columns
from .session_models import Session


@functools.cache
def _statement() -> str:
    columns = user_columns()
    quote = connections["default"].ops.quote_name
    user_id = f"u.{quote(columns.pk)}"
    return (
        f"SELECT s.session_data, {news_sql(user_id)} AS news, {user_id} AS reader_id,"  # noqa: S608
        f" {columns.sql('u')}"
        f" FROM {quote(Session._meta.db_table)} AS s"
        f" LEFT JOIN {quote(columns.table)} AS u ON {user_id} = s.user_id"
        " WHERE s.session_key = %s AND s.expire_date > %s"
    )


class SessionStore(DBStore):
    """Django's database store on ``accounts.Session``, reading its user and news with it."""

    # Whether the session's user has something untold; None until loaded (or no user).
    news: bool | None = None

    @classmethod
    def get_model_class(cls) -> type[Session]:
        return Session

    def _get_session_from_db(self) -> Session | None:
        offer_user_row(None)
        if self.session_key is None:
            return None
        alias = router.db_for_read(Session) or "default"
        rows = prepared_rows(
            _statement(), [self.session_key, timezone.now()], using=connections[alias]
        )
        return self._take(rows[0] if rows else None, alias=alias)

    # The user's id in ``load_alongside``'s statement (NULL without a session or user).
    reader_sql = "session_row.reader_id"

    def load_alongside(
        self, selects: Sequence[str], params: Sequence[object], *, using: BaseDatabaseWrapper
    ) -> tuple[Any, ...] | None:
        """Load this session (its user, its news) in one statement with ``selects``, SQL
        expressions with ``params`` that may use ``reader_sql``; their values, or None (and
        nothing read) if the session is loaded already, has no key or lives elsewhere than
        ``using``. For the page's facts (``peerrevenue.facts``): one round trip, not two."""
        if hasattr(self, "_session_cache") or self.session_key is None:
            return None
        alias = router.db_for_read(Session) or "default"
        if alias != using.alias:
            return None
        offer_user_row(None)
        rows = prepared_rows(
            f"SELECT {', '.join(selects)}, session_row.*"  # noqa: S608 - our own SQL
            f" FROM (SELECT 1) AS one LEFT JOIN ({_statement()}) AS session_row ON true",
            [*params, self.session_key, timezone.now()],
            using=using,
        )
        row = rows[0]  # the left join keeps the one row
        found, session = row[: len(selects)], row[len(selects) :]
        taken = self._take(session if session[0] is not None else None, alias=alias)
        self._session_cache = self.decode(taken.session_data) if taken else {}
        self.accessed = True  # the page's facts may be the reader's: it varies by the cookie
        return found

    def _take(self, row: Sequence[Any] | None, *, alias: str) -> Session | None:
        """The session of a row of ``_statement``; its user offered to the backend."""
        key = self.session_key
        if row is None or key is None:
            self._session_key = None
            return None
        data, news, _reader, *user = row
        user_id = user[user_columns().pk_index]
        if user_id is not None:
            self.news = bool(news)
            offer_user_row(OfferedRow(user_id=user_id, row=tuple(user), alias=alias))
        return Session(session_key=key, session_data=data)

    def create_model_instance(self, data: dict[str, Any]) -> Session:
        session = typing.cast(Session, super().create_model_instance(data))
        session.user_id = _user_id(data.get(SESSION_KEY))
        return session


def _user_id(value: object) -> int | None:
    try:
        return int(value) if value is not None else None  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None
