"""A category's listing pages as announcement days: the stream, each day's replacements, and
the way between days (newer, older, the recent days with their counts).

The stream pages 30 papers at a time and a day may run across pages; a day's replacements
come after its last stream entry, so they sit on the page where the day ends.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.core.paginator import Page
from django.db.models import QuerySet

from .models import Category, Listing

RECENT_DAYS = 8


@dataclass
class Day:
    date: dt.date
    listings: list[Listing] = field(default_factory=list)
    replacements: list[Listing] = field(default_factory=list)


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


def group_days(*, listings: Iterable[Listing], replacements: Iterable[Listing] = ()) -> list[Day]:
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


def days_on_page(*, category: Category, page: Page, until: dt.date | None) -> list[Day]:
    """The page's stream entries by day, with the replacements of each day that ends here.

    A day ends on this page unless the next page starts with it. Days with replacements but
    no new papers belong to the page whose stream passes their date, so none is unreachable.
    """
    listings = list(page.object_list)
    stream = page.paginator.object_list
    assert isinstance(stream, QuerySet)  # the category page paginates its stream queryset
    next_first = None
    if page.has_next():
        next_first = stream.values_list("date", flat=True)[page.end_index()]
    replacements = Listing.objects.replacements(category=category)
    if page.number > 1 and listings:
        replacements = replacements.filter(date__lte=listings[0].date)
    elif until is not None:
        replacements = replacements.filter(date__lte=until)
    if next_first is not None:
        replacements = replacements.filter(date__gt=next_first)
    return group_days(listings=listings, replacements=replacements)


def navigation(*, category: Category, until: dt.date | None) -> DayNavigation:
    """Where the reader is among the category's announcement days, and the way to the others."""
    dates = Listing.objects.filter(category=category).visible().values_list("date", flat=True)
    at_or_before = dates.order_by("-date").distinct()
    if until is not None:
        at_or_before = at_or_before.filter(date__lte=until)
    shown, older = (list(at_or_before[:2]) + [None, None])[:2]
    newer = None
    if until is not None:
        newer = dates.filter(date__gt=until).order_by("date").first()
    recent = [
        DayCount(row["date"], row["papers"], row["replacements"])
        for row in Listing.objects.day_counts(category=category)[:RECENT_DAYS]
    ]
    missing = until if until is not None and until != shown else None
    return DayNavigation(shown=shown, newer=newer, older=older, missing=missing, recent=recent)
