"""What a feed says, parsed: plain records, before anything touches the database."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field, fields, replace
from typing import Any

logger = logging.getLogger(__name__)

# What one record may hold. arXiv's own limits are far lower (1,920 characters an abstract, a few
# hundred a title): anything past these is a broken or hostile feed, and is cut, with a warning,
# rather than allowed to cost minutes of typesetting and matching on every page that shows it.
MAX_TEXT = 20_000  # characters, in each text field and each author's name and affiliation
MAX_AUTHORS = 2_000
MAX_CATEGORIES = 100
MAX_CATEGORY_CODE = 32  # the width of Paper.primary_category; real codes are far shorter


@dataclass(frozen=True)
class ParsedAuthor:
    name: str  # raw TeX, exactly as arXiv sends it
    affiliation: str = ""


@dataclass
class ParsedRecord:
    """One paper as a source tells it (a feed's item, an API answer's, a snapshot's line, an
    OAI record): a record. A paper's *entry* is its place in a list page (``papers.entries``);
    a ledger *entry* is one leg of a transaction (``market.models.Entry``)."""

    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: list[ParsedAuthor]
    categories: list[str]  # primary first
    announce_type: str = ""  # "" when the source does not say (API): derived at write time
    announced_on: dt.date | None = None  # None: the feed's date
    listing_version: int | None = None  # the version the listing announces; None: `version`
    more_authors: bool = False  # the byline ends in "et al": arXiv lists no more authors
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""  # one or several, separated by spaces as arXiv writes them
    report_no: str = ""
    license: str = ""
    submitted_at: dt.datetime | None = None  # version 1's
    updated_at: dt.datetime | None = None  # the current version's
    # Every version's date the source gives (the snapshot and OAI give all of them, the API
    # the first and the current one, RSS none): version number → when arXiv received it.
    version_dates: dict[int, dt.datetime] = field(default_factory=dict)

    def dated_versions(self) -> dict[int, dt.datetime]:
        """Every version date this entry knows, the first and current ones included."""
        dates = dict(self.version_dates)
        if self.submitted_at is not None:
            dates.setdefault(1, self.submitted_at)
        if self.updated_at is not None:
            dates.setdefault(self.version, self.updated_at)
        return dates

    @property
    def primary_category(self) -> str:
        return self.categories[0] if self.categories else ""

    def bounded(self) -> ParsedRecord:
        """This entry within the caps above; each cut is logged, and the rest kept."""
        changes: dict[str, Any] = {}  # field name → its new value, for replace()
        for name in (f.name for f in fields(self)):
            value = getattr(self, name)
            if isinstance(value, str) and len(value) > MAX_TEXT:
                self._warn(name, len(value), MAX_TEXT, "characters")
                changes[name] = value[:MAX_TEXT]
        authors = self.authors
        if len(authors) > MAX_AUTHORS:
            self._warn("authors", len(authors), MAX_AUTHORS, "authors")
            authors = authors[:MAX_AUTHORS]
        if any(len(a.name) > MAX_TEXT or len(a.affiliation) > MAX_TEXT for a in authors):
            longest = max(max(len(a.name), len(a.affiliation)) for a in authors)
            self._warn("author names or affiliations", longest, MAX_TEXT, "characters")
            authors = [
                ParsedAuthor(name=a.name[:MAX_TEXT], affiliation=a.affiliation[:MAX_TEXT])
                for a in authors
            ]
        if authors is not self.authors:
            changes["authors"] = authors
        categories = [code for code in self.categories if len(code) <= MAX_CATEGORY_CODE]
        if len(categories) < len(self.categories):
            self._warn("categories", len(self.categories), len(categories), "(over-long codes)")
        if len(categories) > MAX_CATEGORIES:
            self._warn("categories", len(categories), MAX_CATEGORIES, "categories")
            categories = categories[:MAX_CATEGORIES]
        if len(categories) < len(self.categories):
            changes["categories"] = categories
        return replace(self, **changes) if changes else self

    def _warn(self, what: str, size: int, cap: int, unit: str) -> None:
        logger.warning(
            "arXiv entry %s: %s cut from %d to %d %s", self.arxiv_id, what, size, cap, unit
        )


@dataclass
class ParsedFeed:
    format: str  # "rss" or "api"
    date: dt.date | None  # announcement date; None for an API response spanning several days
    entries: list[ParsedRecord] = field(default_factory=list)
    category: str = ""  # the category the feed is for, when the feed says so (RSS)
    total_results: int | None = None  # API only: opensearch:totalResults
    start_index: int = 0  # API only

    @property
    def is_empty_page(self) -> bool:
        """The API's known glitch: a page with no entries although more results exist."""
        return (
            self.format == "api"
            and not self.entries
            and self.total_results is not None
            and self.total_results > self.start_index
        )
