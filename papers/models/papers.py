"""A paper and what it said at each version we saw."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse

from peerrevenue.validators import NUL_IN_JSON, json_contains_nul

from .. import fulltext
from ..identifiers import validate_arxiv_id
from .authors import Authorship, fold_name

if TYPE_CHECKING:
    from django.utils.safestring import SafeString

# How much of an abstract a listing shows before "Read the full abstract": the clamp in
# static/css/site.css, and the characters its widest line holds (the 52rem column in the serif
# body font, counted generously so that the control never opens onto nothing).
ABSTRACT_CLAMP_LINES = 3
ABSTRACT_LINE_CHARACTERS = 110


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
            from ..typesetting import TYPESETTER_VERSION

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
        from ..typesetting import TYPESETTER_VERSION, tex_to_html, tex_to_text

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
        from ..typesetting import tex_to_text

        return tex_to_text(self.title)

    @property
    def author_names(self) -> list[str]:
        return [author.get("name_text") or author.get("name", "") for author in self.authors]

    @property
    def abstract_text(self) -> str:
        """The abstract as plain Unicode (TeX turned to text), for feeds and length checks."""
        from ..typesetting import tex_to_text

        return tex_to_text(self.abstract)

    @property
    def abstract_is_long(self) -> bool:
        """Whether the abstract runs past the lines a listing shows (``ABSTRACT_CLAMP_LINES``).

        Decided here, not in the browser, so that "Read the full abstract" needs no script:
        each paragraph takes whole lines at the widest layout. Only a long abstract is clamped
        (on a phone a short one may run past three lines, whole), so nothing is ever cut
        without the control, and at the widest layout the control always opens onto more.
        """
        from ..typesetting import tex_to_text

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
