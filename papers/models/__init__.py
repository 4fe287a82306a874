"""The papers app's models, one module per concept, all importable from here as before.

``papers`` a paper and its versions; ``categories`` a category, its watchers, listings and
day counts; ``authors`` the author index and name words; ``ingest_runs`` the feed's runs and
leases; ``reading_marks`` how far a reader has read; ``history`` the bulk sources' positions
and the mentions per month.
"""

from .authors import (
    Authorship,
    AuthorshipQuerySet,
    NameWord,
    author_page,
    fold_name,
    folded_name_sql,
)
from .categories import (
    Category,
    CategoryDay,
    CategoryQuerySet,
    Listing,
    ListingQuerySet,
    Watch,
)
from .history import HistorySource, MentionMonth
from .ingest_runs import IngestRun, IngestRunQuerySet, Lease
from .papers import (
    ABSTRACT_CLAMP_LINES,
    ABSTRACT_LINE_CHARACTERS,
    Paper,
    PaperQuerySet,
    PaperVersion,
)
from .reading_marks import ReadingMark

__all__ = [
    "ABSTRACT_CLAMP_LINES",
    "ABSTRACT_LINE_CHARACTERS",
    "Authorship",
    "AuthorshipQuerySet",
    "Category",
    "CategoryDay",
    "CategoryQuerySet",
    "HistorySource",
    "IngestRun",
    "IngestRunQuerySet",
    "Lease",
    "Listing",
    "ListingQuerySet",
    "MentionMonth",
    "NameWord",
    "Paper",
    "PaperQuerySet",
    "PaperVersion",
    "ReadingMark",
    "Watch",
    "author_page",
    "fold_name",
    "folded_name_sql",
]
