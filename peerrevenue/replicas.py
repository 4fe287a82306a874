"""Where a request reads from: the primary, or a read replica that has seen the reader's writes.

``DATABASE_REPLICA_URL`` adds one database alias per replica (``replica``, ``replica2``, …).
The GET and HEAD requests of reader and market pages (the views of ``papers`` and ``market``,
and the public trader pages) read from a replica; everything else reads and writes the primary:
POSTs, the admin, sign-in and settings pages, Celery tasks and commands (they run outside a
request, where nothing chose a replica).

**Read-your-writes.** Each request with an unsafe method that did not fail records the
primary's WAL position after it (``pg_current_wal_insert_lsn()``, one query) in a signed cookie, so
it holds across instances and workers with nothing kept per process. A later GET from that
client uses a replica only once the replica has replayed past it
(``pg_last_wal_replay_lsn()``); until then it reads the primary, and once a replica is past
it the cookie is dropped. Each process asks a replica for its position at most every
``STATUS_SECONDS``, so a page costs no extra round trip.

**Skipped, never an error.** A replica that refuses connections (short connect timeout) is
left alone for a few seconds (``peerrevenue.availability``), and one more than
``REPLICA_MAX_LAG_SECONDS`` behind is not read.

**Degraded, not down.** With the primary unreachable, reader pages come from a replica
whatever its position (the best there is) with a notice that trading is paused, sessions
included; unsafe requests get the "nothing was traded or saved" 503 at once
(``peerrevenue.errors``). A reader's GET that failed because a database failed it, however it
failed (a refused connection; behind a pooler, the pooler's own errors while the primary is
gone; a connection dropped mid-query), is answered once more in the same request, routed
afresh without that database: with the primary gone, from a replica, so the first request
after the primary stops is served as well as the later ones. All of this recovers by itself.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, get_resolver

from . import availability, errors
from .middleware import replace_content

READER_APPS = ("papers.", "market.")
READER_VIEWS = frozenset(
    {"accounts.views.trader", "library.views.hot_page", "library.views.recommended_page"}
)
# What must always come from the primary while it answers: the session (it names who signed
# in a moment ago) and the database cache (its entries are written on the primary), by
# (app label, model name): the cache's model is a bare Options without a label of its own.
PRIMARY_MODELS = frozenset({("accounts", "session"), ("django_cache", "cacheentry")})

STATUS_SECONDS = 0.15
COOKIE = "pr_written"
COOKIE_SALT = "peerrevenue.replicas.written"
COOKIE_SECONDS = 60 * 60
# When the primary's position could not be read after a write: the primary for this long.
PINNED = "pinned"
PINNED_SECONDS = 60

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

NOTICE = (
    '<p class="site-notice" role="status"><strong>Trading is paused.</strong> The market\'s '
    "database is briefly unavailable: pages show what it held a moment ago, and trades, "
    "watches and settings cannot be saved until it is back.</p>"
)
NOTICE_MARK = "<!--site-notice-->"


@dataclass(frozen=True)
class Route:
    alias: str  # where the request's reads go
    degraded: bool  # the primary is unreachable: sessions too, and the notice


_route: ContextVar[Route | None] = ContextVar("replica_route", default=None)


def replica_aliases() -> list[str]:
    return [alias for alias in settings.DATABASES if alias.startswith("replica")]


def reading_connection() -> BaseDatabaseWrapper:
    """The connection this request reads from, for the few reads that use SQL of their own
    (``django.db.connection`` is always the primary)."""
    return connections[reading_alias()]


def reading_alias() -> str:
    route = _route.get()
    if route is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return DEFAULT_DB_ALIAS
    return route.alias


def degraded() -> bool:
    route = _route.get()
    return route is not None and route.degraded


class Router:
    """Reads go where this request's route says (the primary outside reader GETs), writes
    always to the primary. Inside a transaction on the primary reads stay there, so a GET that
    writes (the front page's reading mark) sees what it locked."""

    def db_for_read(self, model, **hints) -> str | None:
        route = _route.get()
        if route is None:
            return None
        primary = (model._meta.app_label, model._meta.model_name) in PRIMARY_MODELS
        if primary and not route.degraded:
            return None
        if connections[DEFAULT_DB_ALIAS].in_atomic_block:
            return None
        return route.alias

    def db_for_write(self, model, **hints) -> str:
        return DEFAULT_DB_ALIAS

    def allow_relation(self, obj1, obj2, **hints) -> bool:
        return True  # the replicas hold the primary's rows

    def allow_migrate(self, db, app_label, model_name=None, **hints) -> bool:
        return db == DEFAULT_DB_ALIAS


# Replica positions ------------------------------------------------------------------------


@dataclass(frozen=True)
class Position:
    replayed: int  # pg_last_wal_replay_lsn() as a byte offset
    lag_seconds: float  # 0 when everything received is replayed


# alias → (when asked, what it said): None when unreachable or not a replica.
_positions: dict[str, tuple[float, Position | None]] = {}

STATUS_SQL = """
SELECT pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '0/0')::bigint,
       CASE WHEN pg_last_wal_receive_lsn() IS NULL
              OR pg_last_wal_receive_lsn() <= pg_last_wal_replay_lsn() THEN 0
            ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END
"""


def position(alias: str, *, fresh: bool = False) -> Position | None:
    """Where ``alias`` has replayed to, asked at most every STATUS_SECONDS; None when it cannot
    be reached or is not a replica (a promoted one has no replay position)."""
    now = time.monotonic()
    asked_at, known = _positions.get(alias, (float("-inf"), None))
    if not fresh and now - asked_at < STATUS_SECONDS:
        return known
    found = None
    if not availability.is_paused(alias):
        try:
            with connections[alias].cursor() as cursor:
                cursor.execute(STATUS_SQL)
                replayed, lag = cursor.fetchone()
        except errors.DATABASE_UNAVAILABLE:
            connections[alias].close()  # not handed, broken, to the next request
        else:
            if replayed is not None:
                found = Position(replayed=int(replayed), lag_seconds=float(lag or 0))
    _positions[alias] = (now, found)
    return found


def primary_position() -> int:
    """Where the primary's WAL ends, past every commit made so far. The insert position, not
    ``pg_current_wal_lsn()`` (the write position): with ``synchronous_commit = off`` a commit
    can still sit in the WAL buffers, before the write position, and a replica that replayed
    to it would not have the write yet."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint")
        return int(cursor.fetchone()[0])


def primary_answers() -> bool:
    """Whether the primary can be used, without a round trip while its connection is healthy
    (the backend's health check is a zero-timeout select on the socket, which a server shutting
    down has written its goodbye to)."""
    if availability.is_paused(DEFAULT_DB_ALIAS):
        return False
    primary = connections[DEFAULT_DB_ALIAS]
    if primary.connection is not None:
        primary.close_if_health_check_failed()
        if primary.connection is not None:
            return True
    elif availability.connected_recently(DEFAULT_DB_ALIAS):
        return True  # without kept connections: one that worked a moment ago
    try:
        primary.ensure_connection()
    except errors.DATABASE_UNAVAILABLE:
        return False
    return True


def choose(
    *, written: int | None, pinned: bool, avoid: frozenset[str] = frozenset()
) -> Route | None:
    """The route of a reader GET: a replica past ``written`` (the client's last write), or
    None for the primary. ``avoid``: the databases that failed this request already (the
    primary among them: it is taken as unreachable)."""
    aliases = [
        alias
        for alias in replica_aliases()
        if alias not in avoid and not availability.is_paused(alias)
    ]
    if not aliases:
        return None
    if DEFAULT_DB_ALIAS in avoid or not primary_answers():
        reachable = [alias for alias in aliases if position(alias) is not None]
        return Route(random.choice(reachable), degraded=True) if reachable else None
    if pinned:
        return None
    usable = []
    for alias in aliases:
        found = position(alias)
        if found is None or found.lag_seconds > settings.REPLICA_MAX_LAG_SECONDS:
            continue
        if written is not None and found.replayed < written:
            # Perhaps it has caught up since the position was read: ask once more.
            found = position(alias, fresh=True)
            if found is None or found.replayed < written:
                continue
        usable.append(alias)
    return Route(random.choice(usable), degraded=False) if usable else None


# The middleware ---------------------------------------------------------------------------


def _written(request: HttpRequest) -> tuple[int | None, bool]:
    value = request.get_signed_cookie(COOKIE, default=None, salt=COOKIE_SALT)
    if value is None:
        return None, False
    if value == PINNED:
        return None, True
    try:
        return int(value), False
    except ValueError:
        return None, False


def is_reader_view(view_func: Callable) -> bool:
    # A view may also say so itself (the API's, made by django-ninja, are named by it).
    if getattr(view_func, "reads_replicas", False):
        return True
    name = f"{view_func.__module__}.{getattr(view_func, '__name__', '')}"
    return name.startswith(READER_APPS) or name in READER_VIEWS


class ReplicaMiddleware:
    """Chooses each request's route, records a writer's WAL position, and
    turns database outages into the degraded answers above. Above everything that reads the
    database on the way out (the holes filled in pages), below the request id and metrics."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.replicas = bool(replica_aliases())

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with availability.request_scope():
            token = _route.set(None)
            try:
                return self._respond(request)
            finally:
                _route.reset(token)

    def _respond(self, request: HttpRequest) -> HttpResponse:
        if request.method not in SAFE_METHODS:
            if availability.is_paused(DEFAULT_DB_ALIAS):
                return errors.writes_paused(request)
            response = self.get_response(request)
            if self.replicas and response.status_code < 500:
                self._remember_write(response)
            return response
        eligible = self.replicas and request.method in ("GET", "HEAD") and self._reader(request)
        if eligible:
            _route.set(self._choose(request))
        response = self.get_response(request)
        failed = availability.failed_in_this_request()
        if eligible and getattr(response, "database_outage", False) and failed:
            # A database failed this GET: answer it afresh without that one. Any failure
            # counts, not only a refused connection: behind a pooler a stopped primary first
            # shows as an error on a query, and the reader must not be the one who finds out.
            route = self._choose(request, avoid=failed)
            if route is not None or DEFAULT_DB_ALIAS not in failed:  # None: the primary
                _route.set(route)
                response = self.get_response(request)
        route = _route.get()
        if route is not None and not route.degraded and request.COOKIES.get(COOKIE):
            response.delete_cookie(COOKIE)  # a replica has replayed past the client's write
        if route is not None and route.degraded:
            self._add_notice(response)
        return response

    @staticmethod
    def _reader(request: HttpRequest) -> bool:
        # Chosen before anything below reads the session or the user, so those reads go where
        # the page's do: resolving the path once more costs microseconds.
        try:
            match = get_resolver(getattr(request, "urlconf", None)).resolve(request.path_info)
        except Resolver404:
            return False
        return is_reader_view(match.func)

    @staticmethod
    def _choose(request: HttpRequest, *, avoid: frozenset[str] = frozenset()) -> Route | None:
        written, pinned = _written(request)
        return choose(written=written, pinned=pinned, avoid=avoid)

    def _remember_write(self, response: HttpResponse) -> None:
        if DEFAULT_DB_ALIAS in availability.refused_in_this_request():
            return  # nothing was written
        try:
            value, seconds = str(primary_position()), COOKIE_SECONDS
        except errors.DATABASE_UNAVAILABLE:
            # The write has committed (or it would not have answered); its position is
            # unknown, so this client reads the primary for a while.
            value, seconds = PINNED, PINNED_SECONDS
        response.set_signed_cookie(
            COOKIE,
            value,
            salt=COOKIE_SALT,
            max_age=seconds,
            httponly=True,
            samesite="Lax",
            secure=settings.SESSION_COOKIE_SECURE,
        )

    def _add_notice(self, response: HttpResponse) -> None:
        if response.streaming or not response.get("Content-Type", "").startswith("text/html"):
            return
        content = response.content.decode(response.charset or "utf-8")
        if NOTICE_MARK in content:
            replace_content(response, content.replace(NOTICE_MARK, NOTICE, 1))
            response["Cache-Control"] = "no-store"


def forget() -> None:
    """Tests: no remembered replica positions."""
    _positions.clear()
