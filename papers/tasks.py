"""Celery tasks for the daily ingest. They take primary keys and call `papers.ingest`."""

from __future__ import annotations

import logging

from celery import shared_task

from papers import ingest
from papers.arxiv.errors import FetchError
from papers.backfills import backfill_category  # noqa: F401 - the worker finds tasks here
from papers.models import Category, IngestRun

logger = logging.getLogger(__name__)


@shared_task(
    bind=True,
    # The message is acknowledged only once the ingest is done: a worker killed mid-ingest
    # leaves it on the queue, and the re-run is harmless (the write is idempotent).
    acks_late=True,
    # Only network trouble is worth retrying; a malformed feed stays malformed.
    autoretry_for=(FetchError,),
    retry_backoff=60,  # 1, 2, 4, 8, 16 minutes (plus jitter), well before the next beat run
    retry_backoff_max=30 * 60,
    retry_jitter=True,
    max_retries=5,
)
def ingest_category(self, category_id: int) -> int | None:
    """Ingest one category's feed; returns the IngestRun's pk, or None if skipped."""
    category = Category.objects.get(pk=category_id)
    with ingest.ingest_lock(category.pk) as acquired:
        if not acquired:
            # Another worker is ingesting this category right now; its result is the same
            # feed, so a second run could only repeat it.
            logger.info("Skipping %s: another ingest of it is running", category.code)
            return None
        IngestRun.objects.mark_interrupted(category=category)
        run = ingest.ingest_category(category=category)
    return run.pk


@shared_task
def ingest_enabled_categories() -> list[int]:
    """Beat entry point: one ingest task per category with ingest enabled."""
    category_ids = list(
        Category.objects.filter(ingest_enabled=True).order_by("code").values_list("pk", flat=True)
    )
    for category_id in category_ids:
        ingest_category.delay(category_id)
    return category_ids
