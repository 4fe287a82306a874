"""Celery tasks for the daily ingest. They take primary keys and call `papers.ingest`."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.utils import timezone

from papers import ingest, leases
from papers.arxiv.errors import FetchError
from papers.backfills import backfill_category  # noqa: F401 - the worker finds tasks here
from papers.models import Category, IngestRun

logger = logging.getLogger(__name__)


# How long a queued ingest waits for another holder's lease on its category before it gives
# up (the other is ingesting the same feed, or was killed and its lease will soon expire).
LEASE_WAIT_LIMIT = dt.timedelta(minutes=30)


@shared_task(
    bind=True,
    # The message is acknowledged only once the ingest is done: a worker killed mid-ingest
    # leaves it on the queue, and the re-run is harmless (the write is idempotent).
    acks_late=True,
    # Only network trouble (or a download still going at the soft time limit) is worth
    # retrying; a malformed feed stays malformed.
    autoretry_for=(FetchError, SoftTimeLimitExceeded),
    # A minute apart, twenty times: twenty minutes of arXiv trouble, well before the next beat
    # run. Never longer: the worker holds a waiting retry unacknowledged, and the broker's
    # visibility timeout counts that wait (settings.LONGEST_TASK_RETRY_COUNTDOWN).
    retry_backoff=60,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=20,
)
def ingest_category(self, category_id: int, queued_at: str | None = None) -> int | None:
    """Ingest one category's feed; returns the IngestRun's pk, or None if skipped.

    ``queued_at`` (ISO time, default: now) is when the day's pipeline asked for it: a
    successful ingest of the category's feed that started since then (a duplicate message, a
    second beat by mistake) is this one's result too, so the feed is ingested once.
    """
    category = Category.objects.get(pk=category_id)
    queued = dt.datetime.fromisoformat(queued_at) if queued_at else timezone.now()
    with ingest.ingest_lock(category.pk) as acquired:
        if not acquired:
            return _wait_for_lease(self, category=category, queued=queued)
        done = IngestRun.objects.feed_ingested_since(category=category, since=queued)
        if done is not None:
            logger.info("Not ingesting %s again: run %d did since %s", category.code, done, queued)
            return done
        IngestRun.objects.mark_interrupted(category=category)
        # One run a day, kept by the database: the check above misses a run that started
        # before this task arrived (its queue time is its arrival when no one set it), and a
        # holder that stalled past its lease's expiry may still be writing the same day.
        run = ingest.ingest_category(category=category, once_per_day=True)
    return run.pk


def _wait_for_lease(task, *, category: Category, queued: dt.datetime) -> int | None:
    """Another owner holds the category's lease: a live worker ingesting it, or a dead one whose
    lease has not expired yet. Come back when it ends (at most a minute later), and then either
    its run is ours or the feed is still to ingest: never skipped for good because of a dead
    worker. Eager (local, no broker) there is no one to wait for concurrently: skip."""
    if task.request.is_eager or timezone.now() - queued > LEASE_WAIT_LIMIT:
        logger.warning("Skipping %s: another ingest of it holds its lease", category.code)
        return None
    left = leases.expires_in(ingest.ingest_lease_name(category.pk))
    countdown = min(settings.LONGEST_TASK_RETRY_COUNTDOWN, max(1.0, (left or 0) + 1))
    logger.info("Waiting %.0f s for the lease on %s", countdown, category.code)
    # Waiting is not failing: never given up for having waited too many times (the time
    # limit above bounds it).
    raise task.retry(
        countdown=countdown,
        kwargs={"category_id": category.pk, "queued_at": queued.isoformat()},
        args=(),
        max_retries=task.request.retries + 1,
    )


@shared_task
def ingest_enabled_categories() -> list[int]:
    """Beat entry point: one ingest task per category with ingest enabled."""
    category_ids = list(
        Category.objects.filter(ingest_enabled=True).order_by("code").values_list("pk", flat=True)
    )
    for category_id in category_ids:
        ingest_category.delay(category_id)
    return category_ids


@shared_task(
    acks_late=True,
    autoretry_for=(FetchError,),
    # Retries a minute apart at most, as the ingest's: a waiting retry is held unacknowledged
    # and the broker's visibility timeout counts that wait (LONGEST_TASK_RETRY_COUNTDOWN).
    retry_backoff=60,
    retry_backoff_max=60,
    max_retries=5,
)
def harvest_history() -> list[int]:
    """Beat entry point: keep the enabled categories' history current from OAI-PMH, one set
    (archive) at a time, each for at most HISTORY_HARVEST_SECONDS; returns the sources' pks.

    Bounded like every task (the broker's visibility timeout must outlast it): a long harvest
    is finished by the runs after this one, each going on from the resumption token stored.
    """
    from papers.history.oai import harvest

    enabled = list(Category.objects.filter(ingest_enabled=True).order_by("code"))
    budget = float(settings.HISTORY_HARVEST_SECONDS)
    began = timezone.now()
    sources = []
    for set_spec in sorted({category.archive_code for category in enabled}):
        left = budget - (timezone.now() - began).total_seconds()
        if left <= 0:
            break
        with leases.held(name=f"harvest:{set_spec}", seconds=settings.INGEST_LEASE_SECONDS) as held:
            if held is None:
                logger.info("Not harvesting %s: another harvest of it is running", set_spec)
                continue
            members = [category for category in enabled if category.archive_code == set_spec]
            source = harvest(set_spec=set_spec, categories=members, max_seconds=left)
            sources.append(source.pk)
    return sources
