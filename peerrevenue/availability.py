"""Which databases this process could not reach a moment ago.

A database that refused a connection (stopped, restarting, failed over) is left alone for a
short while instead of being asked again by every query: the read replicas
(``peerrevenue.replicas``) are skipped meanwhile, and with the primary gone reader pages come
from a replica and writes are refused before they start (``peerrevenue.errors``). Only
connection attempts count (``peerrevenue.postgres`` reports them): a failed connection
attempt is the one failure that proves nothing was written on that connection in the request.

Per process and in memory on purpose: each process finds out for itself within a second, and
recovers by itself once the pause is over, with nothing to clear by hand.

A database can also fail after the connection was made: behind a pooler the client's connection
is to the pooler, which accepts it and then answers the first query with an error of its own
("server login has been failing", "query_wait_timeout", "no more connections allowed"), or the
server goes away mid-query (``AdminShutdown``). ``query_failed`` hears of every such failure of
a query: one that lost the connection pauses the database as a refusal does (the next requests
of this process need not find out again), and either kind is remembered for the request, so
that a reader's GET can be answered again from elsewhere (``peerrevenue.replicas``). It is not
a refusal: something may have been written before it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import DEFAULT_DB_ALIAS

# How long an unreachable database is left alone. The primary is asked again after a second
# (a restart is over within a few), a replica after a few: without it reads only get slower.
PAUSE_SECONDS = {DEFAULT_DB_ALIAS: 1.0}
REPLICA_PAUSE_SECONDS = 5.0
# A connection to the primary that worked this recently is taken as proof it still answers.
PRIMARY_PROOF_SECONDS = 1.0

_down_until: dict[str, float] = {}
_connected_at: dict[str, float] = {}
# The aliases that refused a connection during the current request (None outside one).
_refused: ContextVar[set[str] | None] = ContextVar("refused_connections", default=None)
# The aliases whose queries failed during the current request (None outside one).
_failed: ContextVar[set[str] | None] = ContextVar("failed_queries", default=None)


def connect_failed(alias: str) -> None:
    _down_until[alias] = time.monotonic() + PAUSE_SECONDS.get(alias, REPLICA_PAUSE_SECONDS)
    refused = _refused.get()
    if refused is not None:
        refused.add(alias)


def query_failed(alias: str, *, lost: bool) -> None:
    """A query on ``alias`` failed as an unreachable database fails; ``lost``: the connection
    is gone with it (the pooler or the server dropped it, or refused to serve it)."""
    if lost:
        _down_until[alias] = time.monotonic() + PAUSE_SECONDS.get(alias, REPLICA_PAUSE_SECONDS)
    failed = _failed.get()
    if failed is not None:
        failed.add(alias)


def connected(alias: str) -> None:
    _down_until.pop(alias, None)
    _connected_at[alias] = time.monotonic()


def is_paused(alias: str) -> bool:
    """Whether ``alias`` refused a connection within its pause."""
    return _down_until.get(alias, 0.0) > time.monotonic()


def connected_recently(alias: str) -> bool:
    return time.monotonic() - _connected_at.get(alias, float("-inf")) < PRIMARY_PROOF_SECONDS


def refused_in_this_request() -> frozenset[str]:
    return frozenset(_refused.get() or ())


def failed_in_this_request() -> frozenset[str]:
    """The aliases that refused a connection or failed a query during the current request."""
    return frozenset((_refused.get() or set()) | (_failed.get() or set()))


@contextmanager
def request_scope() -> Iterator[None]:
    token, failed = _refused.set(set()), _failed.set(set())
    try:
        yield
    finally:
        _failed.reset(failed)
        _refused.reset(token)


def forget() -> None:
    """Tests: start from "everything answers"."""
    _down_until.clear()
    _connected_at.clear()
