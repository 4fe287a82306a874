"""What a feed says, parsed: plain records, before anything touches the database."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field


@dataclass(frozen=True)
class ParsedAuthor:
    name: str  # raw TeX, exactly as arXiv sends it
    affiliation: str = ""


@dataclass
class ParsedEntry:
    arxiv_id: str
    version: int
    title: str
    abstract: str
    authors: list[ParsedAuthor]
    categories: list[str]  # primary first
    announce_type: str = ""  # "" when the source does not say (API): derived at write time
    announced_on: dt.date | None = None  # None: the feed's date
    listing_version: int | None = None  # the version the listing announces; None: `version`
    comment: str = ""
    journal_ref: str = ""
    doi: str = ""
    license: str = ""
    submitted_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None

    @property
    def primary_category(self) -> str:
        return self.categories[0] if self.categories else ""


@dataclass
class ParsedFeed:
    format: str  # "rss" or "api"
    date: dt.date | None  # announcement date; None for an API response spanning several days
    entries: list[ParsedEntry] = field(default_factory=list)
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
