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
from django.utils import timezone

from papers.models import Category, IngestRun
from papers.tasks import ingest_category

from .digest import send_daily_digests

logger = logging.getLogger(__name__)


def ingested_days(*, category_ids: list[int], since: dt.datetime) -> list[dt.date]:
    """The announcement days that these categories' ingests since `since` stored."""
    dates = (
        IngestRun.objects.filter(
            category_id__in=category_ids,
            started_at__gte=since,
            status=IngestRun.Status.SUCCEEDED,
            date__isnull=False,
        )
        .values_list("date", flat=True)
        .distinct()
    )
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
    for date in ingested_days(category_ids=category_ids, since=since):
        missing = missing_categories(date)
        if missing and not last_attempt:
            logger.info("Digests for %s wait for %s", date, ", ".join(missing))
            continue
        if missing:
            logger.warning("Sending the digests for %s without %s", date, ", ".join(missing))
        sent += send_daily_digests(date=date)
    return sent


@shared_task(name="accounts.daily.send_digests_after_ingest", acks_late=True)
def send_digests_after_ingest(*, category_ids: list[int], since: str, last_attempt: bool) -> int:
    return send_digests_for_days(
        category_ids=category_ids,
        since=dt.datetime.fromisoformat(since),
        last_attempt=last_attempt,
    )


@shared_task(name="accounts.daily.run_daily")
def run_daily(*, last_attempt: bool = False) -> list[int]:
    """Beat's entry point: start the day's chord; returns the categories it ingests."""
    category_ids = list(
        Category.objects.filter(ingest_enabled=True).order_by("code").values_list("pk", flat=True)
    )
    if not category_ids:
        return []
    # Immutable, and reading what the ingests stored rather than their return values, so the
    # same signature also serves as the errback: when an ingest fails for good the chord's
    # body is never called, and the other categories' subscribers must not lose their digest.
    digests = send_digests_after_ingest.si(
        category_ids=category_ids,
        since=timezone.now().isoformat(),
        last_attempt=last_attempt,
    )
    chord(
        [ingest_category.si(category_id) for category_id in category_ids],
        digests.clone().on_error(digests),
    ).apply_async()
    return category_ids
