"""A category's listing pages as announcement days: the stream, each day's replacements, and
the way between days (newer, older, the recent days with their counts).

The stream pages 30 papers at a time and a day may run across pages; a day's replacements
come after its last stream entry, so they sit on the page where the day ends.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from django.core.paginator import Page

from .entries import Entry, entry_rows
from .models import Listing

RECENT_DAYS = 8


@dataclass
class Day:
    date: dt.date
    # Listings, or a category page's Entries: anything with a ``date``.
    listings: list[Any] = field(default_factory=list)
    replacements: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class DayCount:
    date: dt.date
    papers: int
    replacements: int


@dataclass(frozen=True)
class DayNavigation:
    shown: dt.date | None  # the announcement day the dated page opens on
    newer: dt.date | None
    older: dt.date | None
    missing: dt.date | None  # the date asked for, when nothing was announced on it
    recent: list[DayCount]


def group_days(*, listings: Iterable[Any], replacements: Iterable[Any] = ()) -> list[Day]:
    """Listings (newest day first) and replacements grouped under their days, newest first."""
    days: dict[dt.date, Day] = {}
    for listing in listings:
        days.setdefault(listing.date, Day(listing.date)).listings.append(listing)
    for listing in replacements:
        days.setdefault(listing.date, Day(listing.date)).replacements.append(listing)
    return sorted(days.values(), key=lambda day: day.date, reverse=True)


def divider_before(*, days: list[Day], new_after: dt.date | None) -> dt.date | None:
    """The day above which the "new since your last visit" divider goes: the first day the
    reader had already seen, when a newer day sits above it on the page."""
    if new_after is None or not days or days[0].date <= new_after:
        return None
    return next((day.date for day in days if day.date <= new_after), None)


class Stream(Sequence["Entry"]):
    """A category's stream up to a day (newest first, ascending arXiv id within a day) for the
    paginator: its length comes from the day counts, and a page is one query of the rows its
    days hold, bounded by those days' dates so that it reads no row of another day however
    long the category's history is."""

    def __init__(self, *, category_id: int, counts: list[DayCount], until: dt.date | None):
        self.category_id = category_id
        self.counts = counts
        self.days = [c for c in counts if c.papers and (until is None or c.date <= until)]

    def __len__(self) -> int:
        return sum(day.papers for day in self.days)

    def date_at(self, index: int) -> dt.date:
        """The day of the entry at ``index`` (0-based) of the stream."""
        return self._day_at(index)[0].date

    def _day_at(self, index: int) -> tuple[DayCount, int]:
        # The day holding the entry at ``index``, and that entry's place within the day.
        for day in self.days:
            if index < day.papers:
                return day, index
            index -= day.papers
        raise IndexError(index)

    @overload
    def __getitem__(self, index: int) -> Entry: ...
    @overload
    def __getitem__(self, index: slice) -> list[Entry]: ...
    def __getitem__(self, index: int | slice) -> Entry | list[Entry]:
        if isinstance(index, int):
            return self[index : index + 1][0]
        start, stop = index.start or 0, min(index.stop, len(self))
        if start >= stop:
            return []
        first, skip = self._day_at(start)
        last, _ = self._day_at(stop - 1)
        return entry_rows(
            Listing.objects.filter(
                category_id=self.category_id,
                announce_type__in=Listing.STREAM_TYPES,
                date__range=(last.date, first.date),
            ),
            offset=skip,
            limit=stop - start,
        )


def days_on_page(*, stream: Stream, page: Page, until: dt.date | None) -> list[Day]:
    """The page's stream entries by day, with the replacements of each day that ends here.

    A day ends on this page unless the next page starts with it. Days with replacements but
    no new papers belong to the page whose stream passes their date, so none is unreachable.
    """
    listings = list(page.object_list)
    high = listings[0].date if page.number > 1 and listings else until
    low = stream.date_at(page.end_index()) if page.has_next() else None
    replaced = [
        c
        for c in stream.counts
        if c.replacements and (high is None or c.date <= high) and (low is None or c.date > low)
    ]
    replacements: list[Entry] = []
    if replaced:
        replacements = entry_rows(
            Listing.objects.filter(
                category_id=stream.category_id, date__range=(replaced[-1].date, replaced[0].date)
            ).exclude(announce_type__in=Listing.STREAM_TYPES),
            replacement=True,
        )
    return group_days(listings=listings, replacements=replacements)


def navigation(*, counts: list[DayCount], until: dt.date | None) -> DayNavigation:
    """Where the reader is among the category's announcement days (``counts``, newest first),
    and the way to the others."""
    at_or_before = [c.date for c in counts if until is None or c.date <= until]
    shown, older = (at_or_before[:2] + [None, None])[:2]
    newer = None
    if until is not None:
        later = [c.date for c in counts if c.date > until]
        newer = later[-1] if later else None
    missing = until if until is not None and until != shown else None
    return DayNavigation(
        shown=shown, newer=newer, older=older, missing=missing, recent=counts[:RECENT_DAYS]
    )


def day_counts(*, category_id: int) -> list[DayCount]:
    """Every announcement day of the category, newest first, with its counts: one query, from
    which the page's navigation, its length and its days' bounds all follow."""
    return [
        DayCount(row["date"], row["papers"], row["replacements"])
        for row in Listing.objects.day_counts(category=category_id)
    ]
