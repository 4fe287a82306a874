from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.db import connection, models
from django.db.models.expressions import RawSQL
from django.urls import reverse

from peerrevenue import replicas
from peerrevenue.validators import NUL_IN_JSON, json_contains_nul

from . import fulltext
from .calendar import announced_at
from .identifiers import validate_archive_code, validate_arxiv_id, validate_category_code

if TYPE_CHECKING:
    from django.contrib.auth.models import User
    from django.utils.safestring import SafeString

# How much of an abstract a listing shows before "Read the full abstract": the clamp in
# static/css/site.css, and the characters its widest line holds (the 52rem column in the serif
# body font, counted generously so that the control never opens onto nothing).
ABSTRACT_CLAMP_LINES = 3
ABSTRACT_LINE_CHARACTERS = 110


def fold_name(name: str) -> str:
    """A name without case, accents or extra spaces, as PostgreSQL's unaccent(lower()) sees
    it: "Ayşe  Dağlı" and "ayse dagli" fold alike."""
    decomposed = unicodedata.normalize("NFKD", " ".join(name.split()).casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).replace("ı", "i")


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


class PaperQuerySet(models.QuerySet):
    def visible(self) -> PaperQuerySet:
        return self.filter(hidden=False)

    def newest_first(self) -> PaperQuerySet:
        # Papers without a submission date (admin-made, or from a feed without enrichment)
        # go after the dated ones instead of first, where PostgreSQL puts NULLs descending.
        return self.order_by(models.F("submitted_at").desc(nulls_last=True), "-arxiv_id")

    def by_author(self, name: str) -> PaperQuerySet:
        """Papers with an author called `name`, ignoring case and accents (Dağlı = Dagli), as
        far as they are shown (``Authorship`` leaves hidden papers out)."""
        return self.filter(pk__in=Authorship.objects.named(name).values("paper_id"))

    # Not shown by any list entry: the search vector, and the four times. Django reads a
    # timestamp through psycopg's Python loader (its time-zone loader is a subclass of it), a
    # regular expression each: 120 of them on a page of 30 papers cost more than its query.
    ENTRY_DEFERRED = ("search_vector", "submitted_at", "updated_at", "created_at", "modified_at")

    def for_entries(self) -> PaperQuerySet:
        """Without the columns no list entry shows (``ENTRY_DEFERRED``)."""
        return self.defer(*self.ENTRY_DEFERRED)


class Paper(models.Model):
    # The validator is the paper URL's own pattern: get_absolute_url() must work for every row.
    arxiv_id = models.CharField(
        max_length=32,
        unique=True,
        validators=[validate_arxiv_id],
        help_text="Without the version, e.g. 2611.01234 or math.GT/0309136",
    )
    version = models.PositiveIntegerField(default=1, help_text="Current version number")
    title = models.TextField(help_text="Raw TeX as arXiv sends it")
    title_html = models.TextField(blank=True)
    abstract = models.TextField(blank=True, help_text="Raw TeX as arXiv sends it")
    abstract_html = models.TextField(blank=True)
    # [{"name": raw TeX, "name_text": rendered Unicode, "affiliation": raw TeX,
    #   "affiliation_text": rendered Unicode}, ...] in byline order.
    authors = models.JSONField(default=list, blank=True)
    authors_text = models.TextField(blank=True, help_text="Rendered names, for search")
    more_authors = models.BooleanField(
        default=False,
        db_default=False,
        help_text='The byline ends in "et al": arXiv lists no more authors',
    )
    typesetter_version = models.PositiveIntegerField(default=0)
    primary_category = models.CharField(max_length=32, db_index=True)
    categories = models.JSONField(default=list, blank=True, help_text="All codes, primary first")
    comment = models.TextField(blank=True)
    journal_ref = models.TextField(blank=True)
    # Text, not a 200-character field: a paper may carry several DOIs, separated by spaces as
    # arXiv writes them (``dois``), and a cut would leave half of one.
    doi = models.TextField(blank=True, help_text="One or several, separated by spaces")
    # Defaults in the database too: rows written by COPY or plain SQL that do not name the
    # newer columns (benchmarks, psql) stay possible.
    report_no = models.TextField(
        blank=True,
        default="",
        db_default="",
        help_text="The report number(s), as arXiv has them",
    )
    license = models.URLField(max_length=300, blank=True)
    submitted_at = models.DateTimeField(null=True, blank=True, help_text="First version")
    updated_at = models.DateTimeField(null=True, blank=True, help_text="Current version")
    # Every version's date the sources told, on the paper rather than on PaperVersion: those
    # rows hold a version's text, which the bulk sources never give for a version before the
    # current one, and a date is one small value read with the paper (and moving its stamp).
    # A list, item n-1 for version n: an ISO time in UTC, or null while no source dated it.
    version_dates = models.JSONField(
        default=list, db_default=models.Value([], models.JSONField()), blank=True, editable=False
    )
    hidden = models.BooleanField(default=False, help_text="Hidden papers appear nowhere.")
    created_at = models.DateTimeField(auto_now_add=True)
    modified_at = models.DateTimeField(auto_now=True)
    # Moved by the database whenever the paper, its listings or its versions change
    # (papers/sql/stamps.sql): what its kept entry and page are keyed by (peerrevenue.keep).
    stamp = models.BigIntegerField(default=0, editable=False)
    # Computed by PostgreSQL from the typeset text on every write (papers.fulltext), so the
    # bulk writes of the ingest keep it current without knowing it exists.
    search_vector = models.GeneratedField(
        expression=fulltext.search_vector(), output_field=SearchVectorField(), db_persist=True
    )

    objects = PaperQuerySet.as_manager()

    # Not columns: what the pages that list papers set on the ones they show (search marks,
    # saved-search matches, terms named); None elsewhere, so that a template's look-up, e.g.
    # the kept entry's key, finds them at once.
    announced: dt.date
    matched_queries: list[int]
    search_title: SafeString | None = None
    search_authors: SafeString | None = None
    search_snippet: SafeString | None = None
    search_words: list[str] | None = None
    search_category: SimpleNamespace
    mentioned_terms: list[object] | None = None  # market terms named (market_search tags)

    #: What a paper is typeset from, and the columns its typesetting writes.
    TEX_FIELDS = ("title", "abstract", "authors")
    TYPESET_FIELDS = (
        "title_html",
        "abstract_html",
        "authors",
        "authors_text",
        "typesetter_version",
    )

    class Meta:
        ordering = ["-arxiv_id"]
        indexes = [
            # Categories, words, title words alone (for ti:, as the search vector cannot tell
            # a title word from the same word in an abstract without a recheck), and the arXiv
            # id (ranking looks among the newest papers): one index, so that GIN intersects
            # any of them itself, rarest first (papers.fulltext.CategoryCodes).
            GinIndex(
                fulltext.CategoryCodes("categories"),
                "search_vector",
                fulltext.title_vector(),
                "arxiv_id",
                name="paper_search",
            ),
            # The few hidden papers: the counts of papers.CategoryDay's triggers leave them out.
            models.Index(fields=["id"], condition=models.Q(hidden=True), name="paper_hidden"),
        ]

    def __str__(self) -> str:
        return f"{self.arxiv_id}v{self.version}"

    def save(self, *args, **kwargs) -> None:
        # A curator's edit in the admin (or any save) shows typeset at once, on every page:
        # the post_save signal then invalidates the cached pages.
        update_fields = kwargs.get("update_fields")
        if update_fields is None:
            from .typesetting import TYPESETTER_VERSION

            stale = self.typesetter_version < TYPESETTER_VERSION
            if stale or self.tex_changed():
                self.typeset()
        elif self.tex_changed(update_fields):
            self.typeset()
            kwargs["update_fields"] = {*update_fields, *self.TYPESET_FIELDS}
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("papers:paper", args=[self.arxiv_id])

    def clean(self) -> None:
        """Keep what the admin saves in the shape the pages read: a list of author objects
        with text fields, a list of category codes, and nothing PostgreSQL cannot store."""
        # The admin sends a cleared JSON box as None; the columns hold lists.
        self.authors = [] if self.authors is None else self.authors
        self.categories = [] if self.categories is None else self.categories
        errors = {}
        if not isinstance(self.authors, list) or not all(
            isinstance(author, dict)
            and isinstance(author.get("name"), str)
            and all(
                isinstance(author.get(key, ""), str)
                for key in ("name_text", "affiliation", "affiliation_text")
            )
            for author in self.authors
        ):
            errors["authors"] = (
                'Give a list of authors, e.g. [{"name": "Ada Lovelace", "affiliation": ""}].'
            )
        if not isinstance(self.categories, list) or not all(
            isinstance(code, str) for code in self.categories
        ):
            errors["categories"] = 'Give a list of category codes, e.g. ["cs.DC", "cs.LG"].'
        for name in ("authors", "categories"):
            if name not in errors and json_contains_nul(getattr(self, name)):
                errors[name] = NUL_IN_JSON
        if errors:
            raise ValidationError(errors)

    @classmethod
    def from_db(cls, db, field_names, values):
        paper = super().from_db(db, field_names, values)
        paper._typeset_from = paper._tex_source()
        return paper

    def _tex_source(self) -> dict[str, object]:
        """The loaded TeX fields as typesetting reads them (deferred ones are not loaded here:
        they were not read, so they cannot have been edited)."""
        deferred = self.get_deferred_fields()
        source: dict[str, object] = {
            name: getattr(self, name) for name in ("title", "abstract") if name not in deferred
        }
        if "authors" not in deferred:
            # Names with their renderings, and affiliations (TeX too): an edit of either
            # typesets the byline again, and so does a byline stored before affiliations were
            # rendered, when a source brings it again.
            source["authors"] = [
                (
                    author.get("name"),
                    author.get("name_text"),
                    author.get("affiliation"),
                    "affiliation_text" in author,
                )
                if isinstance(author, dict)
                else author
                for author in self.authors or ()
            ]
        return source

    def tex_changed(self, fields: Iterable[str] | None = None) -> bool:
        """Whether the TeX (among ``fields``, by default all of it) differs from what was last
        loaded or typeset; always true for a paper never typeset in this process."""
        seen = getattr(self, "_typeset_from", None)
        if seen is None:
            return True
        now = self._tex_source()
        names = self.TEX_FIELDS if fields is None else set(self.TEX_FIELDS) & set(fields)
        return any(name in now and (name not in seen or now[name] != seen[name]) for name in names)

    def typeset(self) -> None:
        """Render the title, abstract and author names into the columns the pages show; the
        caller saves.  The one place papers are typeset: save() calls it when the TeX changed,
        and ingest (which writes in bulk, without save()) and `retypeset` call it directly."""
        # Imported here: typesetting loads pylatexenc and the MathML machinery, which only the
        # processes that render need.
        from .typesetting import TYPESETTER_VERSION, tex_to_html, tex_to_text

        # paragraphs=False: a title is one line even when arXiv wraps it.
        self.title_html = tex_to_html(self.title, paragraphs=False)
        self.abstract_html = tex_to_html(self.abstract)
        self.authors = [
            {
                "name": author.get("name", ""),
                "name_text": tex_to_text(author.get("name", "")),
                # TeX as the names are (`Universit\"at Wien`), shown as plain text like them.
                "affiliation": author.get("affiliation", ""),
                "affiliation_text": tex_to_text(author.get("affiliation", "")),
            }
            for author in self.authors
        ]
        self.authors_text = ", ".join(author["name_text"] for author in self.authors)
        self.typesetter_version = TYPESETTER_VERSION
        self._typeset_from = self._tex_source()

    def dated_versions(self) -> dict[int, dt.datetime]:
        """Version number → when arXiv received it, as far as the sources told."""
        return {
            number: dt.datetime.fromisoformat(at)
            for number, at in enumerate(self.version_dates or (), start=1)
            if isinstance(at, str) and at
        }

    def date_versions(self, dates: Mapping[int, dt.datetime]) -> None:
        """Add what a source tells of its versions' dates to what is known, in memory: a date
        it gives replaces the one stored for that version, and a version it does not date (an
        RSS item dates none) keeps the one known."""
        known = {**self.dated_versions(), **dates}
        if not known:
            return
        self.version_dates = [
            known[number].astimezone(dt.UTC).isoformat() if number in known else None
            for number in range(1, max(known) + 1)
        ]

    @property
    def dois(self) -> list[str]:
        return self.doi.split()

    def version_history(self, versions: Iterable[PaperVersion]) -> list[SimpleNamespace]:
        """Every version from v1 to the current one, oldest first, as arXiv's abstract page
        lists them: ``number``, ``submitted_at`` (None when unknown), ``current``, and
        ``title`` when that version's title differs from the current one."""
        stored = {version.number: version for version in versions}
        known = {1: self.submitted_at, self.version: self.updated_at or None}
        if self.version == 1:
            known[1] = self.submitted_at or self.updated_at
        # The sources' own dates first; papers stored before they were kept have the others.
        dated = self.dated_versions()
        history = []
        for number in range(1, self.version + 1):
            version = stored.get(number)
            at = (
                dated.get(number)
                or (version.submitted_at if version and version.submitted_at else None)
                or known.get(number)
            )
            title = version.title if version and version.title != self.title else ""
            history.append(
                SimpleNamespace(
                    number=number, submitted_at=at, current=number == self.version, title=title
                )
            )
        return history

    @property
    def arxiv_abs_url(self) -> str:
        return f"https://arxiv.org/abs/{self.arxiv_id}"

    @property
    def arxiv_pdf_url(self) -> str:
        return f"https://arxiv.org/pdf/{self.arxiv_id}"

    @property
    def arxiv_html_url(self) -> str:
        return f"https://arxiv.org/html/{self.arxiv_id}"

    @property
    def license_url(self) -> str:
        """The licence as a link target, only when it is a web address: feeds carry whatever
        text they like, and ``javascript:`` in an href would run when a reader clicks it."""
        return self.license if self.license.lower().startswith(("http://", "https://")) else ""

    @property
    def title_text(self) -> str:
        """The title as plain Unicode, for <title>, feeds and search."""
        from .typesetting import tex_to_text

        return tex_to_text(self.title)

    @property
    def author_names(self) -> list[str]:
        return [author.get("name_text") or author.get("name", "") for author in self.authors]

    @property
    def abstract_text(self) -> str:
        """The abstract as plain Unicode (TeX turned to text), for feeds and length checks."""
        from .typesetting import tex_to_text

        return tex_to_text(self.abstract)

    @property
    def abstract_is_long(self) -> bool:
        """Whether the abstract runs past the lines a listing shows (``ABSTRACT_CLAMP_LINES``).

        Decided here, not in the browser, so that "Read the full abstract" needs no script:
        each paragraph takes whole lines at the widest layout. Only a long abstract is clamped
        (on a phone a short one may run past three lines, whole), so nothing is ever cut
        without the control, and at the widest layout the control always opens onto more.
        """
        from .typesetting import tex_to_text

        lines = 0
        for paragraph in re.split(r"\n\s*\n", self.abstract):
            text = tex_to_text(paragraph)
            if text:
                lines += -(-len(text) // ABSTRACT_LINE_CHARACTERS)  # whole lines, rounded up
        return lines > ABSTRACT_CLAMP_LINES

    def author_named(self, name: str) -> str:
        """This byline's own spelling of `name` (accents and all), or `name` if it has none."""
        folded = fold_name(name)
        return next((each for each in self.author_names if fold_name(each) == folded), name)

    @property
    def short_authors(self) -> str:
        """`A`, `A and B`, `A, B and C`, or `A, B, C et al. (+N more)`; `A, B et al.` when the
        byline itself ends in "et al" (``more_authors``)."""
        names = self.author_names
        if self.more_authors and len(names) <= 3:
            return f"{', '.join(names)} et al."
        if len(names) <= 1:
            return "".join(names)
        if len(names) <= 3:
            return f"{', '.join(names[:-1])} and {names[-1]}"
        return f"{', '.join(names[:3])} et al. (+{len(names) - 3} more)"


class PaperVersion(models.Model):
    """What a paper said at each version we saw, so a replacement never loses the old text."""

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    title = models.TextField()
    abstract = models.TextField(blank=True)
    # When arXiv received this version, as far as we know it: the API tells the first
    # version's date and the current one's (papers.ingest); a version in between, seen by
    # neither, has none.
    submitted_at = models.DateTimeField(null=True, blank=True)
    seen_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["number"]
        constraints = [
            models.UniqueConstraint(fields=["paper", "number"], name="unique_paper_version")
        ]

    def __str__(self) -> str:
        return f"{self.paper.arxiv_id}v{self.number}"


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


def folded_name_sql(placeholder: str = "%s") -> str:
    """SQL folding a name as the author index folds bylines (``paper_author_keys`` in
    papers/sql/author_index.sql): unaccent(lower())."""
    return f"public.unaccent('public.unaccent'::regdictionary, lower({placeholder}))"


class AuthorshipQuerySet(models.QuerySet):
    def named(self, name: str) -> AuthorshipQuerySet:
        folded = RawSQL(folded_name_sql(), [" ".join(name.split())])
        return self.filter(name=folded)


class Authorship(models.Model):
    """One author of a shown paper, by the folded name author pages look up, with what the
    page orders by: an author's page reads its thirty rows and its count from one index
    (``papers_authorship_page``, migration 0021) instead of visiting every one of the
    author's papers to sort them.

    Written by the database alone: triggers on papers add a paper's rows, write them again
    when its authors, submission time, identifier or hidden flag change, and delete them
    with it. A hidden paper has none. Never write it from Python.
    """

    paper = models.ForeignKey(Paper, on_delete=models.CASCADE, related_name="+")
    name = models.TextField()  # unaccent(lower(the rendered name, else the raw one))
    submitted_at = models.DateTimeField(null=True)
    arxiv_id = models.CharField(max_length=32)

    objects = AuthorshipQuerySet.as_manager()

    def __str__(self) -> str:
        return f"{self.name}: {self.arxiv_id}"


# The page of an author's papers and how many there are, in one statement: the rows and the
# count come from the author's index entries; of each paper only its stamp is read (its entry
# is most often kept: papers.entries).
_AUTHOR_PAGE_SQL = """
SELECT page.paper_id, p.stamp, page.total
FROM (SELECT paper_id, submitted_at, arxiv_id, count(*) OVER () AS total
      FROM papers_authorship WHERE name = {folded}
      ORDER BY submitted_at DESC NULLS LAST, arxiv_id DESC
      OFFSET %s LIMIT %s) AS page
JOIN papers_paper AS p ON p.id = page.paper_id
ORDER BY page.submitted_at DESC NULLS LAST, page.arxiv_id DESC
"""


def author_page(*, name: str, start: int, stop: int) -> tuple[list[tuple[int, int]], int]:
    """The (paper id, stamp) of papers ``start`` to ``stop`` of an author's shown papers,
    newest first (those without a submission time last), and how many they have in all."""
    sql = _AUTHOR_PAGE_SQL.format(folded=folded_name_sql())
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(sql, [" ".join(name.split()), start, stop - start])
        rows = cursor.fetchall()
    if rows:
        return [(paper_id, stamp) for paper_id, stamp, _ in rows], rows[0][2]
    # Past the end, or no such author: the count alone.
    return [], Authorship.objects.named(name).count() if start else 0


class NameWord(models.Model):
    """A word of some paper's author names or title, accent-folded and lowercase: what the
    search's fallback compares a misspelled word with ("lamprt" is like "lamport").

    Tens of thousands of distinct words, where comparing with every paper's names and title
    means 300,000 long texts. Kept by PostgreSQL itself (the triggers of
    papers/sql/name_words.sql add the words of every paper written), so neither the ingest nor
    the admin has to know; a word whose papers changed stays, and simply finds no paper.
    """

    word = models.TextField(primary_key=True)

    class Meta:
        indexes = [GinIndex(OpClass("word", name="gin_trgm_ops"), name="nameword_trigrams")]

    def __str__(self) -> str:
        return self.word


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


class ReadingMark(models.Model):
    """How far a signed-in reader has read their front page, for "new since your last visit".

    ``seen_through`` is the newest announcement day their front page has shown them;
    ``new_after`` is where the divider stands: days after it arrived since the visit before.
    Dates, not times: an ingest that runs late still counts as new.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_mark"
    )
    seen_through = models.DateField(null=True, blank=True)
    new_after = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} has read through {self.seen_through or 'nothing yet'}"


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


# Bulk history's bookkeeping lives in a module of its own (this one is long enough).
from .history_models import HistorySource, MentionMonth  # noqa: E402, F401
