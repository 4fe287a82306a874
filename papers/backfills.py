"""A category's past listings from the arXiv API (``backfill``: the ``backfill`` command), and
bringing a category in from the admin: enable its daily ingest and fetch its recent past.

From the admin the fetch runs in the Celery worker (it pages through the arXiv API for
minutes); one IngestRun row, "running" until it ends, shows its progress on the category's
admin page, and each stored day leaves its own run there too.
"""

from __future__ import annotations

import datetime as dt
import functools
import logging
from collections.abc import Callable

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from peerrevenue.queueing import send_from_request

from . import ingest
from .arxiv.client import fetch_api
from .arxiv.errors import IngestError
from .arxiv.queries import page_params, submitted_between
from .arxiv.records import ParsedFeed, ParsedRecord
from .models import Category, IngestRun

logger = logging.getLogger(__name__)

BACKFILL_DAYS = 14
BACKFILL_SOURCE = "Backfill"


def enable_and_backfill(*, categories: list[Category], days: int = BACKFILL_DAYS) -> None:
    """Turn on the daily ingest of `categories` and queue a backfill of their last `days`."""
    since = timezone.localdate() - dt.timedelta(days=days)
    for category in categories:
        category.ingest_enabled = True
        category.save(update_fields=["ingest_enabled"])
        # Queued once the admin's transaction commits, so the worker sees the category enabled.
        transaction.on_commit(
            functools.partial(_queue_backfill, category=category, since=since), robust=True
        )


def _queue_backfill(*, category: Category, since: dt.date) -> None:
    """Send the backfill to the worker; if the broker is down, say so where the curator looks
    (the category's recent runs) rather than fail the admin page or pretend it started."""
    queued = send_from_request(
        backfill_category,
        args=(category.pk, since.isoformat()),
        what=f"the backfill of {category.code} since {since}",
    )
    if not queued:
        IngestRun.objects.create(
            category=category,
            source=f"{BACKFILL_SOURCE} from {since:%Y-%m-%d}: not started",
            status=IngestRun.Status.FAILED,
            finished_at=timezone.now(),
            error="Could not be queued: the task queue (Redis) was unreachable. The daily "
            "ingest is enabled and runs as usual; choose “Enable daily ingest and backfill” "
            "again once the queue is back to fetch the past days.",
        )


# Named into papers.tasks so that the route for that module sends it to the ingest queue,
# whose single worker keeps to arXiv's one request every three seconds.
@shared_task(bind=True, name="papers.tasks.backfill_category", acks_late=True, max_retries=30)
def backfill_category(self, category_id: int, since: str, until: str | None = None) -> int | None:
    """Store a category's listings since `since` (ISO date); returns the progress run's pk."""
    category = Category.objects.get(pk=category_id)
    with ingest.ingest_lock(category.pk) as acquired:
        if not acquired:
            # The daily ingest of this category is running: come back when it is done.
            raise self.retry(countdown=60)
        IngestRun.objects.mark_interrupted(category=category)
        return run_backfill(
            category=category,
            since=dt.date.fromisoformat(since),
            until=dt.date.fromisoformat(until) if until else None,
        ).pk


def run_backfill(*, category: Category, since: dt.date, until: dt.date | None) -> IngestRun:
    """The backfill itself, with a progress row; call it holding the category's ingest lock."""
    until = until or timezone.localdate()
    label = f"{BACKFILL_SOURCE} {since:%Y-%m-%d} to {until:%Y-%m-%d}"
    progress = IngestRun.objects.create(category=category, source=f"{label}: starting")
    started = timezone.now()

    def on_page(done: int, total: int) -> None:
        # An UPDATE of its own, committed at once: the admin shows it while the fetch goes on.
        IngestRun.objects.filter(pk=progress.pk).update(
            source=f"{label}: {done} of {total} papers fetched", items=done
        )

    try:
        backfill(category=category, since=since, until=until, on_page=on_page)
    except IngestError as exc:
        progress.refresh_from_db()
        progress.status = IngestRun.Status.FAILED
        progress.error = str(exc) or type(exc).__name__
    else:
        progress.refresh_from_db()
        progress.status = IngestRun.Status.SUCCEEDED
        progress.source = f"{label}: done"
    days = IngestRun.objects.filter(
        category=category, started_at__gte=started, status=IngestRun.Status.SUCCEEDED
    ).exclude(pk=progress.pk)
    totals = days.aggregate(
        papers_created=Sum("papers_created"),
        papers_updated=Sum("papers_updated"),
        listings_created=Sum("listings_created"),
    )
    for field, value in totals.items():
        setattr(progress, field, value or 0)
    progress.finished_at = timezone.now()
    progress.save()
    logger.info("%s of %s: %s", label, category.code, progress.status)
    return progress


def backfill(
    *,
    category: Category,
    since: dt.date,
    until: dt.date | None = None,
    page_size: int = 100,
    on_page: Callable[[int, int], None] | None = None,
) -> list[IngestRun]:
    """Store a category's past listings from the arXiv API, one transaction per listing day.

    Pages through `cat:<code>` submissions from `since` to `until` (inclusive submission dates)
    in ascending submission order, dating each by `announcement_date_for`. Because that order
    makes announcement dates non-decreasing, a day is complete (and written) as soon as a later
    day shows up. `on_page(done, total)` reports progress. Re-running is harmless.
    """
    until = until or timezone.now().date()
    if until < since:
        raise IngestError(f"--until ({until}) is before --since ({since}).")
    search = submitted_between(category_code=category.code, since=since, until=until)
    runs: list[IngestRun] = []
    pending: dict[dt.date, list[ParsedRecord]] = {}

    def flush(days: list[dt.date]) -> None:
        for day in sorted(days):
            parsed = ParsedFeed(format="api", date=day, entries=pending.pop(day))
            source = f"{settings.ARXIV_API_URL}?search_query={search.query} (backfill {day})"
            runs.append(ingest.ingest_feed(category=category, parsed=parsed, source=source))

    start = 0
    total: int | None = None
    while total is None or start < total:
        try:
            page = fetch_api(page_params(search, start=start, size=page_size))
        except IngestError as exc:
            failed = IngestRun.objects.create(
                category=category, source=f"{settings.ARXIV_API_URL} (backfill from {since})"
            )
            ingest.record_failure(failed, exc)
            raise
        total = page.total_results if page.total_results is not None else len(page.entries)
        if not page.entries:
            break
        for entry in page.entries:
            assert entry.announced_on is not None  # the API parser dates every entry
            pending.setdefault(entry.announced_on, []).append(entry)
        start += len(page.entries)
        latest = max(pending)
        flush([day for day in pending if day < latest])
        if on_page:
            on_page(min(start, total), total)
    flush(list(pending))
    return runs
