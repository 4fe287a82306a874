"""Celery tasks of the API: the nightly dumps."""

from __future__ import annotations

import datetime as dt
import logging

from django.utils import timezone

from peerrevenue.retries import database_task

from .dumps import make_dumps

logger = logging.getLogger(__name__)


@database_task("api.tasks.nightly_dumps")
def nightly_dumps(day_iso: str | None = None) -> list[str]:
    """Dump trades, prices and dividends up to a UTC day (by default the day just closed)."""
    day = (
        dt.date.fromisoformat(day_iso) if day_iso else timezone.now().date() - dt.timedelta(days=1)
    )
    made = make_dumps(day=day)
    for dump in made:
        logger.info("Dump %s: %d rows, %d bytes", dump.file_name, dump.rows, dump.size)
    return [dump.file_name for dump in made]
