"""The daily pipeline: ingest every enabled category, then mail each subscriber one digest.

Beat starts `run_daily` after arXiv's evening announcement (see CELERY_BEAT_SCHEDULE). It is
one Celery chord: a `papers.tasks.ingest_category` task per enabled category, and when every
one of them has finished, `send_digests_after_ingest`. Dividends need no step here: the market
pays them as each category's day is written (its receiver of `papers.signals.
listings_announced`), so they are in before the digests report how the terms moved.

accounts is the last app, so this is the one module that may know both ends of the day.
"""

from __future__ import annotations

import datetime as dt
import logging

from celery import chord, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.db.models import Max
from django.utils import timezone

from papers import leases
from papers.models import Category, IngestRun
from papers.tasks import ingest_category

from .digest import send_daily_digests

logger = logging.getLogger(__name__)


def ingested_days(
    *, category_ids: list[int], since: dt.datetime, newest: bool = False
) -> list[dt.date]:
    """The announcement days that these categories' ingests since `since` stored; with
    `newest`, also each category's newest stored day. A day has one run however often it is
    fetched (`IngestRunQuerySet.ingested_day`): an ingest since `since` that found its day
    stored by an earlier run (21:30's, fetched again at 23:30) returned that run, which started
    before `since`, and the day's last attempt must still send what is in."""
    succeeded = IngestRun.objects.filter(
        category_id__in=category_ids, status=IngestRun.Status.SUCCEEDED, date__isnull=False
    )
    dates = set(succeeded.filter(started_at__gte=since).values_list("date", flat=True))
    if newest:
        latest = succeeded.values("category_id").annotate(latest=Max("date"))
        dates |= {row["latest"] for row in latest}
    return sorted(dates)


def missing_categories(date: dt.date) -> list[str]:
    """The enabled categories with no successful ingest of announcement day `date` yet."""
    ingested = IngestRun.objects.filter(date=date, status=IngestRun.Status.SUCCEEDED)
    return list(
        Category.objects.filter(ingest_enabled=True)
        .exclude(pk__in=ingested.values("category_id"))
        .order_by("code")
        .values_list("code", flat=True)
    )


def send_digests_for_days(
    *, category_ids: list[int], since: dt.datetime, last_attempt: bool
) -> int:
    """Mail the digests of every day these ingests stored whose enabled categories are all in.

    A day with a category still missing (its feed not rebuilt yet, or its ingest failed) waits
    for the next run, unless this is the day's last attempt: then its subscribers get what is
    in rather than nothing. Returns how many digests were sent; re-running sends none twice.
    """
    sent = 0
    for date in ingested_days(category_ids=category_ids, since=since, newest=last_attempt):
        missing = missing_categories(date)
        if missing and not last_attempt:
            logger.info("Digests for %s wait for %s", date, ", ".join(missing))
            continue
        if missing:
            logger.warning("Sending the digests for %s without %s", date, ", ".join(missing))
        sent += send_daily_digests(date=date)
    return sent


@shared_task(bind=True, name="accounts.daily.send_digests_after_ingest", acks_late=True)
def send_digests_after_ingest(
    self, *, category_ids: list[int], since: str, last_attempt: bool
) -> int:
    try:
        return send_digests_for_days(
            category_ids=category_ids,
            since=dt.datetime.fromisoformat(since),
            last_attempt=last_attempt,
        )
    except SoftTimeLimitExceeded:
        # Many subscribers outlast one task's time limit (kept short, so that a task whose
        # worker died is run again within minutes): a fresh run sends the rest, skipping
        # everyone already claimed, until all are done.
        raise self.retry(countdown=1, max_retries=self.request.retries + 1) from None


# How long a beat slot's claim lasts: longer than two beats' clocks can disagree, shorter than
# the time to the next slot (21:30 → 23:30).
SLOT_CLAIM_SECONDS = 60 * 60


@shared_task(bind=True, name="accounts.daily.run_daily")
def run_daily(self, *, last_attempt: bool = False, slot: str = "") -> list[int]:
    """Beat's entry point: start the day's chord; returns the categories it ingests.

    ``slot`` (beat's schedule names it, "21:30") makes the run once per slot: a second beat
    started by mistake fires the same slot too, and its run finds the slot claimed (a lease
    that is never released, only expires) and starts nothing. By hand, without a slot, it
    always runs. The claim's owner is the task: the same message redelivered after its worker
    died may claim it again."""
    owner = f"run_daily:{self.request.id}"
    claim = f"daily-pipeline:{slot}"
    if slot and leases.take(name=claim, seconds=SLOT_CLAIM_SECONDS, owner=owner) is None:
        logger.warning("The %s daily pipeline was already started (two beats running?)", slot)
        return []
    category_ids = list(
        Category.objects.filter(ingest_enabled=True).order_by("code").values_list("pk", flat=True)
    )
    if not category_ids:
        return []
    queued_at = timezone.now().isoformat()
    # Immutable, and reading what the ingests stored rather than their return values, so the
    # same signature also serves as the errback: when an ingest fails for good the chord's
    # body is never called, and the other categories' subscribers must not lose their digest.
    digests = send_digests_after_ingest.si(
        category_ids=category_ids,
        since=queued_at,
        last_attempt=last_attempt,
    )
    chord(
        [ingest_category.si(category_id, queued_at=queued_at) for category_id in category_ids],
        digests.clone().on_error(digests),
    ).apply_async()
    return category_ids
