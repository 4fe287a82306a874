"""What an operator of several instances watches: Prometheus metrics at ``/metrics``.

Two kinds of figures, each kept where it is true:

- **Events** (request latency by view, responses by status, trades, refused trades, rate-limit
  refusals) are counted by the process they happen in, with prometheus_client. With
  ``PROMETHEUS_MULTIPROC_DIR`` set (``peerrevenue/gunicorn_conf.py`` empties it when gunicorn
  starts) every worker writes its counts to files there and a scrape adds up all the workers
  of that instance; without it a scrape sees only the worker that answered, so production sets
  it. Prometheus scrapes each instance itself (not through the load balancer) and sums.
- **State** (ingest runs and their outcome, replica lag, task queue length, which databases
  answer) is read at scrape time from where it lives — PostgreSQL, the replicas, Redis — so
  every instance reports the same values: take ``max`` across instances, not ``sum``. Apps add
  their own with ``scrape_source`` (papers: the ingest runs).

Only the operator may read it: a request with ``Authorization: Bearer <METRICS_TOKEN>``
(what Prometheus sends, through any proxy) or a signed-in staff member.
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.http import HttpRequest, HttpResponse
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from . import errors, replicas

logger = logging.getLogger(__name__)
M = TypeVar("M", Histogram, Counter)

REQUEST_SECONDS = Histogram(
    "peerrevenue_request_seconds",
    "Time to answer a request, by view (URL name) and method.",
    ["view", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
RESPONSES = Counter(
    "peerrevenue_responses", "Responses by view and status code.", ["view", "status"]
)
TRADES = Counter("peerrevenue_trades", "Trades done (not repeats of one already done).", ["side"])
TRADE_REFUSALS = Counter(
    "peerrevenue_trade_refusals",
    "Trades refused: by the market (cash, shares, slippage, halted term…) or the rate limit.",
    ["reason"],
)
RATE_LIMITED = Counter(
    "peerrevenue_rate_limited", "Requests refused by a rate limit (429), by limit.", ["scope"]
)

# Kombu's Redis transport keeps a queue's messages in a list named after it, and those of
# higher priorities in lists with these suffixes.
QUEUES = ("celery", "ingest")
PRIORITY_SUFFIXES = ("", "\x06\x163", "\x06\x166", "\x06\x169")

_sources: list[Callable[[], Iterable[Metric]]] = []


def scrape_source(source: Callable[[], Iterable[Metric]]) -> None:
    """Register figures read at scrape time (an app's ``ready()``); a source whose database is
    unreachable is skipped for that scrape."""
    _sources.append(source)


def view_name(request: HttpRequest) -> str:
    match = request.resolver_match
    return match.view_name if match is not None and match.view_name else "other"


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


class MetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self._timers: dict[tuple[str, ...], Histogram] = {}
        self._counters: dict[tuple[str, ...], Counter] = {}

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        view = view_name(request)
        seconds = time.perf_counter() - started
        # Any word a client sends as its method would be a series of its own.
        method = request.method if request.method in METHODS else "other"
        _child(REQUEST_SECONDS, self._timers, (view, method)).observe(seconds)
        _child(RESPONSES, self._counters, (view, str(response.status_code))).inc()
        return response


def _child(metric: M, children: dict[tuple[str, ...], M], labels: tuple[str, ...]) -> M:
    """``metric.labels(*labels)``, looked up once per process: a child is the same object
    every time, and ``labels()`` takes a lock to find it."""
    found = children.get(labels)
    if found is None:
        found = children[labels] = metric.labels(*labels)
    return found


# Figures read at scrape time ----------------------------------------------------------------


def database_figures() -> Iterator[Metric]:
    up = GaugeMetricFamily(
        "peerrevenue_database_up", "Whether a database answered this scrape.", labels=["alias"]
    )
    lag_seconds = GaugeMetricFamily(
        "peerrevenue_replica_lag_seconds",
        "How far a replica's replay is behind what it has received (0 when caught up).",
        labels=["alias"],
    )
    lag_bytes = GaugeMetricFamily(
        "peerrevenue_replica_lag_bytes",
        "WAL the primary has written that a replica has not replayed.",
        labels=["alias"],
    )
    try:
        primary: int | None = replicas.primary_position()
        up.add_metric([DEFAULT_DB_ALIAS], 1)
    except errors.DATABASE_UNAVAILABLE:
        connections[DEFAULT_DB_ALIAS].close()
        primary = None
        up.add_metric([DEFAULT_DB_ALIAS], 0)
    for alias in replicas.replica_aliases():
        found = replicas.position(alias, fresh=True)
        up.add_metric([alias], 0 if found is None else 1)
        if found is None:
            continue
        lag_seconds.add_metric([alias], found.lag_seconds)
        if primary is not None:
            lag_bytes.add_metric([alias], max(primary - found.replayed, 0))
    yield from (up, lag_seconds, lag_bytes)


def queue_figures() -> Iterator[Metric]:
    if not settings.REDIS_URL:
        return  # tasks run eagerly: there is no queue
    import redis

    length = GaugeMetricFamily(
        "peerrevenue_task_queue_length", "Tasks waiting in a Celery queue.", labels=["queue"]
    )
    client = redis.Redis.from_url(
        settings.CELERY_BROKER_URL, socket_timeout=0.5, socket_connect_timeout=0.5
    )
    try:
        with client.pipeline(transaction=False) as pipe:
            for queue in QUEUES:
                for suffix in PRIORITY_SUFFIXES:
                    pipe.llen(queue + suffix)
            counts = pipe.execute()
    except redis.RedisError:
        yield GaugeMetricFamily("peerrevenue_broker_up", "Whether Redis answered.", value=0)
        return
    finally:
        client.close()
    steps = len(PRIORITY_SUFFIXES)
    for number, queue in enumerate(QUEUES):
        length.add_metric([queue], sum(counts[number * steps : (number + 1) * steps]))
    yield GaugeMetricFamily("peerrevenue_broker_up", "Whether Redis answered.", value=1)
    yield length


class _ScrapeTime(Collector):
    def collect(self) -> Iterator[Metric]:
        for source in (database_figures, queue_figures, *_sources):
            try:
                yield from list(source())
            except errors.DATABASE_UNAVAILABLE:
                connections[DEFAULT_DB_ALIAS].close()
                logger.warning("Metrics: %s skipped, its database is unreachable", source)


_state = CollectorRegistry(auto_describe=False)
_state.register(_ScrapeTime())


def exposition() -> bytes:
    if settings.PROMETHEUS_MULTIPROC_DIR:
        events = CollectorRegistry()
        multiprocess.MultiProcessCollector(events)
    else:
        events = REGISTRY
    return generate_latest(events) + generate_latest(_state)


def allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    given = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
        return True
    if given:
        return False  # a wrong token is not a session's business
    try:
        return bool(request.user.is_authenticated and request.user.is_staff)
    except errors.DATABASE_UNAVAILABLE:
        return False


def metrics_view(request: HttpRequest) -> HttpResponse:
    if not allowed(request):
        return HttpResponse(
            "Metrics are for the operator: send Authorization: Bearer <METRICS_TOKEN>, or "
            "sign in as staff.\n",
            status=403,
            content_type="text/plain; charset=utf-8",
        )
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
    response["Cache-Control"] = "no-store"
    return response
