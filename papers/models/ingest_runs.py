"""Ingesting a category's feed: each run of it, and the lease that lets one worker at a
time run it."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models

from ..calendar import announced_at
from .categories import Category


class IngestRunQuerySet(models.QuerySet):
    def feed_ingested_since(self, *, category: Category, since: dt.datetime) -> int | None:
        """The pk of a successful ingest of the category's daily feed that started at or after
        ``since`` (not a backfill's or a file's), if any."""
        return (
            self.filter(
                category=category,
                status=IngestRun.Status.SUCCEEDED,
                started_at__gte=since,
                source=settings.ARXIV_RSS_URL.format(category=category.code)[:500],
            )
            .order_by("started_at")
            .values_list("pk", flat=True)
            .first()
        )

    def ingested_day(self, *, category: Category, date: dt.date, source: str) -> IngestRun | None:
        """At the end of the transaction that stored a feed of ``date`` from ``source``, before
        it records its run: the run that stored that day already, if any; else None, and no
        other ingest of the category gets past this call until this transaction ends.

        The category's row is locked first (``FOR NO KEY UPDATE``: rows that merely refer to
        the category, listings and runs, are not held up). Call it after the feed's writes:
        the stamp triggers lock a category's row when its papers change, also from another
        category's ingest of a cross-listed paper, so taking it before the papers' locks could
        deadlock. The lease alone cannot promise one run a day: a holder that stalls past its
        expiry loses the lease while it still writes, and a run queued after another started
        ingests again by design. Two ingests of the same feed meet here whatever led them
        here, and under READ COMMITTED the query after the lock wait sees what the one before
        committed, on any pooled server connection (the transaction keeps its own)."""
        Category.objects.select_for_update(no_key=True).filter(pk=category.pk).values("pk").first()
        return (
            self.filter(
                category=category,
                date=date,
                source=source[:500],
                status=IngestRun.Status.SUCCEEDED,
            )
            .order_by("started_at")
            .first()
        )

    def mark_interrupted(self, *, category: Category) -> int:
        """Close the runs a dead worker left "running"; call only while holding the ingest lock,
        when no live run of the category can exist."""
        from django.utils import timezone

        return self.filter(category=category, status=IngestRun.Status.RUNNING).update(
            status=IngestRun.Status.FAILED,
            error="Interrupted: the worker running it stopped before it finished.",
            finished_at=timezone.now(),
        )


class IngestRun(models.Model):
    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="ingest_runs")
    date = models.DateField(null=True, blank=True, help_text="Announcement date of the feed")
    announced_at = models.DateTimeField(
        null=True,
        blank=True,
        editable=False,
        help_text="When arXiv announced the listing day: 20:00 New York time the day before",
    )
    source = models.CharField(max_length=500, help_text="Feed URL or file path")
    started_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    items = models.PositiveIntegerField(default=0, help_text="Entries in the feed")
    papers_created = models.PositiveIntegerField(default=0)
    papers_updated = models.PositiveIntegerField(default=0)
    listings_created = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    objects = IngestRunQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at"]

    def __str__(self) -> str:
        return f"{self.category.code} {self.date or '?'} {self.status}"

    def save(self, *args, **kwargs) -> None:
        # The instant follows the listing day, whichever path (RSS, API, file, backfill) set it:
        # the market pays by when a day was announced, never by when our ingest ran.
        self.announced_at = announced_at(self.date) if self.date else None
        if (update_fields := kwargs.get("update_fields")) is not None and "date" in update_fields:
            kwargs["update_fields"] = {*update_fields, "announced_at"}
        super().save(*args, **kwargs)

    @property
    def duration(self) -> dt.timedelta | None:
        return self.finished_at - self.started_at if self.finished_at else None


class Lease(models.Model):
    """The right to do one job (``ingest:<category id>``), held by one owner until it is
    released or expires. Taken, renewed and released by ``papers.leases``, each in one
    statement on the database's clock, so it works through a transaction pooler and across
    machines; a worker that dies holding one simply stops renewing it."""

    name = models.CharField(max_length=200, primary_key=True)
    owner = models.CharField(max_length=200, help_text="host:pid:token of the holder")
    taken_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} held by {self.owner} until {self.expires_at:%H:%M:%S}"
