"""``/healthz``: whether this instance can serve, for a load balancer that asks every second.

200 when the database answers a ``SELECT 1`` and Redis a ``PING`` (or no Redis is configured),
503 otherwise, with a small JSON body that says which is down. With the primary down but a read
replica answering (``DATABASE_REPLICA_URL``) the instance still serves every reader page, with
trading paused (``peerrevenue.replicas``): that is a 200 whose body says ``"reads only"``, so
that the balancer keeps sending readers to it instead of answering them all with its own 503.

Answered by a middleware at the top of the stack, before anything else runs: no session, no
CSRF, no rate limit, no page cache, no HTTPS redirect (a balancer checks over plain HTTP), and
nothing written. The host is still checked against ``ALLOWED_HOSTS`` (a 400 otherwise): the
balancer sends the site's own name.

Cheap: the database check reuses the process's kept connection (one round trip), Redis has a
quarter second to answer. Failures are not logged on every call (a balancer would write one
line a second per instance): each process logs once when a service goes down and once when it
is back.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable

import redis
from django.conf import settings
from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage
from django.db import DatabaseError, connection, connections
from django.db.backends.base.base import BaseDatabaseWrapper
from django.http import HttpRequest, HttpResponse

from . import replicas

logger = logging.getLogger(__name__)

PATH = "/healthz"
REDIS_TIMEOUT_SECONDS = 0.25

_lock = threading.Lock()
_redis: redis.Redis | None = None
_down: set[str] = set()  # what this process last found down, to log changes only


def _redis_client() -> redis.Redis:
    global _redis
    with _lock:
        if _redis is None:
            _redis = redis.Redis.from_url(
                settings.REDIS_URL,
                socket_timeout=REDIS_TIMEOUT_SECONDS,
                socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            )
        return _redis


def check_database(database: BaseDatabaseWrapper = connection) -> str:
    try:
        with database.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        # The next request's connection handling (CONN_HEALTH_CHECKS) opens a fresh one.
        database.close_if_unusable_or_obsolete()
        return (
            f"down: {str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
        )
    return "ok"


def check_redis() -> str:
    if not settings.REDIS_URL:
        return "not configured"
    try:
        _redis_client().ping()
    except redis.RedisError as exc:
        return f"down: {exc}"
    return "ok"


def check_replicas() -> str | None:
    """ "ok" when some read replica answers, else why not; None without replicas."""
    aliases = replicas.replica_aliases()
    if not aliases:
        return None
    states = [check_database(connections[alias]) for alias in aliases]
    return "ok" if "ok" in states else states[0]


def check_static() -> str | None:
    """What to do when production's static files were never collected, else None. Pages name
    their stylesheets by the hashes in collectstatic's manifest, read when the process starts:
    without it every page fails, so the instance must not be sent any."""
    if isinstance(staticfiles_storage, ManifestFilesMixin) and not staticfiles_storage.hashed_files:
        return "down: no collectstatic manifest; run manage.py collectstatic, then restart"
    return None


def health() -> tuple[int, dict[str, str]]:
    checks = {"database": check_database(), "redis": check_redis()}
    static = check_static()
    if static is not None:
        checks["static"] = static
    down = {name for name, state in checks.items() if state.startswith("down")}
    replica = check_replicas() if "database" in down else None
    if replica is not None:
        checks["replica"] = replica
        if replica == "ok":
            checks["serving"] = "reads only"
    with _lock:
        for name in down - _down:
            logger.warning("Health check: %s is %s", name, checks[name])
        for name in _down - down:
            logger.warning("Health check: %s is back", name)
        _down.clear()
        _down.update(down)
    serving = not down or (down == {"database"} and replica == "ok")
    return (200 if serving else 503), checks


class HealthCheckMiddleware:
    """First in ``MIDDLEWARE``: answers ``/healthz`` and passes everything else on."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info != PATH:
            return self.get_response(request)
        request.get_host()  # ALLOWED_HOSTS: a DisallowedHost is Django's 400
        status, checks = health()
        response = HttpResponse(
            json.dumps(checks) + "\n", status=status, content_type="application/json"
        )
        response["Cache-Control"] = "no-store"
        if status != 200:
            response["Retry-After"] = "1"
        # Django logs every 5xx response as an error; the state changes are logged above.
        response._has_been_logged = True  # type: ignore[attr-defined]
        return response
