"""The ingest's figures for /metrics (peerrevenue.metrics), read from the runs' table at
scrape time: ingests run in Celery workers, whose counters no web process could see."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, Max
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from .models import IngestRun


def ingest_figures() -> Iterator[Metric]:
    runs = GaugeMetricFamily(
        "peerrevenue_ingest_runs",
        "Ingest runs recorded, by category and outcome (running, succeeded, failed).",
        labels=["category", "status"],
    )
    for row in IngestRun.objects.values("category__code", "status").annotate(n=Count("id")):
        runs.add_metric([row["category__code"], row["status"]], row["n"])
    last = GaugeMetricFamily(
        "peerrevenue_ingest_last_success_timestamp_seconds",
        "When a category's last successful ingest finished (Unix time).",
        labels=["category"],
    )
    finished = (
        IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED, finished_at__isnull=False)
        .values("category__code")
        .annotate(at=Max("finished_at"))
    )
    for row in finished:
        last.add_metric([row["category__code"]], row["at"].timestamp())
    yield from (runs, last)
