"""Django's PostgreSQL backend with a health check that costs no round trip.

With ``CONN_HEALTH_CHECKS`` Django asks, before a request's first query on a kept connection,
whether it still works, and the stock answer is a ``SELECT 1``: a round trip and a statement
for the server on every request, a sixth of a signed-in page's time. An idle connection has
nothing to read, so if its socket is readable the server has closed it or said why it is about
to (a restart, ``pg_terminate_backend``, an idle timeout): that is checked with a zero-timeout
``select()``. A connection that is not idle (inside a transaction) gets the stock check.

Every connection attempt's outcome is told to ``peerrevenue.availability``, which the replica
routing and the outage pages read, and so is every query that failed as an unreachable database
fails: behind a pooler the connection to the pooler succeeds while the database behind it is
gone, and the first sign of that is an error on a query.
"""

from __future__ import annotations

import select
from functools import cached_property

import psycopg
from django.db import InterfaceError, OperationalError
from django.db.backends.postgresql import base
from django.db.utils import DatabaseErrorWrapper
from psycopg.pq import TransactionStatus

from peerrevenue import availability

DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)
# What the driver raises when the database (or the pooler in front of it) fails a query.
DRIVER_UNAVAILABLE = (psycopg.OperationalError, psycopg.InterfaceError)
# SQLSTATEs that say the server will not serve this connection any more, whatever the socket's
# state: pgbouncer's own errors are 08P01 ("server login has been failing", "query_wait_timeout")
# or 53300 ("no more connections allowed"); a server shutting down sends 57P01-57P03.
LOST_STATES = frozenset({"53300", "57P01", "57P02", "57P03"})


def lost_connection(exc: BaseException, connection: psycopg.Connection | None) -> bool:
    """Whether ``exc`` took the connection with it, rather than failing one statement (a
    statement timeout, a serialization failure) on a connection that still works."""
    if connection is None or connection.closed or connection.broken:
        return True
    state = getattr(exc, "sqlstate", None) or ""
    return state.startswith("08") or state in LOST_STATES


class _ErrorWrapper(DatabaseErrorWrapper):
    """Django's wrapping of driver errors, telling ``peerrevenue.availability`` of the ones
    an unreachable database raises."""

    wrapper: DatabaseWrapper  # set by DatabaseErrorWrapper.__init__, which has no annotations

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None and issubclass(exc_type, DRIVER_UNAVAILABLE):
            wrapper = self.wrapper
            availability.query_failed(
                wrapper.alias, lost=lost_connection(exc_value, wrapper.connection)
            )
        return super().__exit__(exc_type, exc_value, traceback)


class DatabaseWrapper(base.DatabaseWrapper):
    @cached_property
    def wrap_database_errors(self) -> DatabaseErrorWrapper:
        return _ErrorWrapper(self)

    def is_usable(self) -> bool:
        connection = self.connection
        if connection is None or connection.closed or connection.broken:
            return False
        if connection.info.transaction_status != TransactionStatus.IDLE:
            return super().is_usable()
        try:
            readable, _, _ = select.select([connection.fileno()], [], [], 0)
        except (OSError, ValueError):  # the socket is gone already
            return False
        return not readable

    def ensure_connection(self) -> None:
        if self.connection is not None:  # every query passes here: no more work than Django's
            return
        try:
            super().ensure_connection()
        except DATABASE_UNAVAILABLE:
            availability.connect_failed(self.alias)
            raise
        availability.connected(self.alias)
