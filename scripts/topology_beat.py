"""Celery beat for the topology checks: the project's own app, with the daily pipeline due every
TOPOLOGY_BEAT_SECONDS instead of at 21:30 New York time.

The checks start two of these at once, as an operator might start a second beat by mistake,
to show that two beats firing the same tick still give one ingest per category and day. The
production beat (`celery -A peerrevenue beat`) keeps the real schedule.
"""

from __future__ import annotations

import os

from peerrevenue.celery import app

app.conf.beat_schedule = {
    "daily-pipeline-now": {
        "task": "accounts.daily.run_daily",
        "schedule": float(os.environ.get("TOPOLOGY_BEAT_SECONDS", "8")),
        # One slot, as the production schedule names its two: the two beats' ticks claim it
        # and only the first starts the pipeline.
        "kwargs": {"last_attempt": False, "slot": "topology"},
    }
}

__all__ = ["app"]
