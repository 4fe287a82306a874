"""A category, the readers who watch it, its listings (which paper on which day, and how),
and the counts of each of its days."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection, models
from django.urls import reverse

from peerrevenue import replicas

from ..identifiers import validate_archive_code, validate_category_code
from .papers import Paper

if TYPE_CHECKING:
    from django.contrib.auth.models import User


class CategoryQuerySet(models.QuerySet):
    def with_counts(self) -> CategoryQuerySet:
        """Annotate what the category pages can reach: ``paper_count`` (new and cross-list
        listings, the daily streams), ``replacement_count`` and ``latest_date``."""
        visible = models.Q(listings__paper__hidden=False)
        in_stream = models.Q(listings__announce_type__in=Listing.STREAM_TYPES)
        return self.annotate(
            paper_count=models.Count("listings", filter=visible & in_stream),
            replacement_count=models.Count("listings", filter=visible & ~in_stream),
            latest_date=models.Max("listings__date", filter=visible),
        )


class Category(models.Model):
    # The validators keep both codes usable in /list/<code>/ and /archive/<archive_code>/.
    code = models.CharField(
        max_length=32,
        unique=True,
        validators=[validate_category_code],
        help_text="arXiv code, e.g. cs.DC",
    )
    name = models.CharField(max_length=200)
    archive_code = models.CharField(
        max_length=32, validators=[validate_archive_code], help_text="e.g. cs"
    )
    archive_name = models.CharField(max_length=200, help_text="e.g. Computer Science")
    ingest_enabled = models.BooleanField(
        default=False, help_text="Fetch this category's feed on the daily schedule."
    )
    # Annotated: the plugin cannot follow a through model named as a string.
    watchers: models.ManyToManyField[User, Watch] = models.ManyToManyField(
        settings.AUTH_USER_MODEL, through="Watch", related_name="watched_categories", blank=True
    )
    # Moved by the database whenever the category, its listings or their papers change
    # (papers/sql/stamps.sql): what its kept pages are keyed by (peerrevenue.keep).
    stamp = models.BigIntegerField(default=0, editable=False)

    objects = CategoryQuerySet.as_manager()

    # Not columns: what CategoryQuerySet.with_counts() annotates.
    paper_count: int
    replacement_count: int
    latest_date: dt.date | None

    class Meta:
        ordering = ["code"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return f"{self.code} ({self.name})"

    def get_absolute_url(self) -> str:
        return reverse("papers:category", args=[self.code])

    @property
    def is_ingested(self) -> bool:
        """Whether the site has (or fetches) this category's papers; needs ``with_counts()``."""
        return self.ingest_enabled or bool(self.paper_count or self.replacement_count)

    @property
    def arxiv_url(self) -> str:
        return f"https://arxiv.org/list/{self.code}/new"

    def toggle_watch(self, user) -> bool:
        """Watch the category, or stop watching it; returns whether the user now watches."""
        deleted, _ = Watch.objects.filter(user=user, category=self).delete()
        if deleted:
            return False
        # A double click can race here; the unique constraint makes the second one a no-op.
        Watch.objects.get_or_create(user=user, category=self)
        return True


class Watch(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    category = models.ForeignKey(Category, on_delete=models.CASCADE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "category"], name="unique_watch_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} watches {self.category.code}"

    @classmethod
    def exists_for(cls, *, user_id: int, category_id: int) -> bool:
        """Whether the user watches the category: asked on every signed-in category page, so
        by a fixed statement (through the ORM, building the query took longer than running it)."""
        table = connection.ops.quote_name(cls._meta.db_table)
        with replicas.reading_connection().cursor() as cursor:
            cursor.execute(
                f"SELECT 1 FROM {table} WHERE user_id = %s AND category_id = %s LIMIT 1",
                [user_id, category_id],
            )
            return cursor.fetchone() is not None


class ListingQuerySet(models.QuerySet):
    def visible(self) -> ListingQuerySet:
        return self.filter(paper__hidden=False)

    def replacements(self, *, category: Category) -> ListingQuerySet:
        """The category's replacements, newest day first and ascending arXiv id within a day."""
        return (
            self.filter(category=category)
            .exclude(announce_type__in=Listing.STREAM_TYPES)
            .visible()
            .select_related("paper")
            .defer("paper__search_vector")
            .order_by("-date", "paper__arxiv_id")
        )

    def stream(self, *, category: Category, until: dt.date | None = None) -> ListingQuerySet:
        """A category's daily stream, newest day first and ascending arXiv id within a day.

        Replacements are left out (the paper page shows versions), and so are hidden papers.
        """
        listings = self.filter(
            category=category,
            announce_type__in=Listing.STREAM_TYPES,
            paper__hidden=False,
        )
        if until is not None:
            listings = listings.filter(date__lte=until)
        return (
            listings.select_related("paper")
            .defer("paper__search_vector")
            .order_by("-date", "paper__arxiv_id")
        )

    def watched_by(self, user) -> ListingQuerySet:
        """The streams of every category the user watches, merged, newest day first."""
        return (
            self.filter(
                category__watch__user=user,
                announce_type__in=Listing.STREAM_TYPES,
                paper__hidden=False,
            )
            .select_related("paper", "category")
            .order_by("-date", "paper__arxiv_id", "category__code")
        )


class Listing(models.Model):
    class AnnounceType(models.TextChoices):
        NEW = "new", "New"
        CROSS = "cross", "Cross-list"
        REPLACE = "replace", "Replacement"
        REPLACE_CROSS = "replace-cross", "Replacement of a cross-list"

    # Types that enter a day's stream; replacements show on the paper page only.
    STREAM_TYPES = (AnnounceType.NEW, AnnounceType.CROSS)

    category = models.ForeignKey(Category, on_delete=models.CASCADE, related_name="listings")
    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="listings")
    date = models.DateField(help_text="Announcement date")
    announce_type = models.CharField(max_length=16, choices=AnnounceType.choices)
    version = models.PositiveIntegerField(default=1, help_text="Version announced")
    # Neither bulk source (the metadata snapshot, OAI-PMH) says when a paper was announced: its
    # day is derived from v1's submission under arXiv's schedule (papers.history), so it may be
    # a day or two off. The daily feed's own listings are exact, and always win.
    # A default in the database too: rows written by COPY or plain SQL (benchmarks, psql) are
    # the feed's, exact.
    approximate = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Day derived from the submission time (bulk history)",
    )

    objects = ListingQuerySet.as_manager()

    class Meta:
        ordering = ["-date", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["category", "paper", "date"], name="unique_listing_per_day"
            )
        ]
        indexes = [
            # A category page's entries: a few days of one category, read from the index alone
            # (without the types and papers in it the planner walked the days of every
            # category through listing_date and checked each listing's category in the table).
            models.Index(
                fields=["category", "-date"],
                include=["announce_type", "paper", "version"],
                name="listing_category_day",
            ),
            # Search's date filter: the papers announced in a range, read from the index alone.
            # Not a partial index (announce_type in the stream types): a prepared statement's
            # generic plan could not prove its condition and would not use it.
            models.Index(fields=["date"], include=["announce_type", "paper"], name="listing_date"),
        ]

    def __str__(self) -> str:
        return f"{self.category.code} {self.date} {self.paper.arxiv_id} ({self.announce_type})"


class CategoryDay(models.Model):
    """One announcement day of a category and what its pages show of it: ``papers`` (visible
    new and cross-listed papers, the day's stream) and ``replacements`` (visible replacements).

    Written by the database alone (papers/sql/day_counts.sql): statement triggers on listings
    and papers add and take away as listings come and go and papers are hidden or shown, so the
    category page reads the few days it shows instead of counting the category's whole
    history. A row whose counts fall to nothing is deleted. Never write it from Python.
    """

    # No index of its own: the unique constraint below leads with it.
    category = models.ForeignKey(
        Category, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    date = models.DateField()
    papers = models.IntegerField(default=0)
    replacements = models.IntegerField(default=0)

    class Meta:
        constraints = [
            # Also the page's index: a category's days by date, counts read from the index.
            models.UniqueConstraint(
                fields=["category", "date"],
                include=["papers", "replacements"],
                name="unique_category_day",
            )
        ]

    def __str__(self) -> str:
        return f"{self.category_id} {self.date}: {self.papers} + {self.replacements}"
