"""Django's PostgreSQL backend with a health check that costs no round trip.

With ``CONN_HEALTH_CHECKS`` Django asks, before a request's first query on a kept connection,
whether it still works, and the stock answer is a ``SELECT 1``: a round trip and a statement
for the server on every request, a sixth of a signed-in page's time. An idle connection has
nothing to read, so if its socket is readable the server has closed it or said why it is about
to (a restart, ``pg_terminate_backend``, an idle timeout): that is checked with a zero-timeout
``select()``. A connection that is not idle (inside a transaction) gets the stock check.

Every connection attempt's outcome is told to ``peerrevenue.availability``, which the replica
routing and the outage pages read.
"""

from __future__ import annotations

import select

from django.db import InterfaceError, OperationalError
from django.db.backends.postgresql import base
from psycopg.pq import TransactionStatus

from peerrevenue import availability

DATABASE_UNAVAILABLE = (OperationalError, InterfaceError)


class DatabaseWrapper(base.DatabaseWrapper):
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
