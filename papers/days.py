"""A category's listing pages as announcement days: the stream, each day's replacements, and
the way between days (newer, older, the recent days with their counts).

The stream pages 30 papers at a time and a day may run across pages; a day's replacements
come after its last stream entry, so they sit on the page where the day ends.

The days and their counts are rows the database keeps (``CategoryDay``, by the triggers of
papers/sql/day_counts.sql), so a page reads the few it shows, whatever the length of the
category's history: one query for the category, the navigation, the stream's length and the
days its page holds (``read_days``), and one for the page's entries (``days_on_page``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from django.core.paginator import EmptyPage, Page, Paginator
from django.http import Http404

from peerrevenue import replicas
from peerrevenue.db import prepared_rows
from peerrevenue.pagination import number_of

from .day_groups import Day as Day
from .day_groups import group_days
from .entries import entry_rows
from .models import Category, CategoryDay

RECENT_DAYS = 8
# Far past any page a category has (20 years of cs.DC are ~1,000 pages): a hand-typed huge
# ?page= must still make a LIMIT PostgreSQL accepts.
MAX_PAGE = 1_000_000


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


def divider_before(*, days: list[Day], new_after: dt.date | None) -> dt.date | None:
    """The day above which the "new since your last visit" divider goes: the first day the
    reader had already seen, when a newer day sits above it on the page."""
    if new_after is None or not days or days[0].date <= new_after:
        return None
    return next((day.date for day in days if day.date <= new_after), None)


@dataclass(frozen=True)
class CategoryDays:
    """What ``read_days`` found: the category, and of its days only those a page needs."""

    category: Category
    until: dt.date | None
    recent: list[DayCount]  # the newest days, newest first
    newer: dt.date | None  # the first day after ``until``
    near: list[dt.date]  # the two days at or before ``until``, newest first
    stream: list[DayCount]  # the days with papers at or before ``until``, as far as the page
    length: int  # papers in the stream at or before ``until``


# Every part reads the index of (category, date) with the counts in it; ``until`` NULL is the
# newest page. One round trip: the page's first query after a change.
_DAYS_SQL = """
SELECT c.id, c.code, c.name, c.archive_code, c.archive_name, c.ingest_enabled,
       d.kind, d.date, d.papers, d.replacements
FROM papers_category AS c
LEFT JOIN LATERAL (
  (SELECT 1 AS kind, date, papers, replacements FROM papers_categoryday
   WHERE category_id = c.id ORDER BY date DESC LIMIT %(recent)s)
  UNION ALL
  (SELECT 2, date, papers, replacements FROM papers_categoryday
   WHERE category_id = c.id AND date > %(until)s::date ORDER BY date LIMIT 1)
  UNION ALL
  (SELECT 3, date, papers, replacements FROM papers_categoryday
   WHERE category_id = c.id AND date <= coalesce(%(until)s::date, 'infinity')
   ORDER BY date DESC LIMIT 2)
  UNION ALL
  (SELECT 4, date, papers, replacements FROM papers_categoryday
   WHERE category_id = c.id AND date <= coalesce(%(until)s::date, 'infinity') AND papers > 0
   ORDER BY date DESC LIMIT %(days)s)
  UNION ALL
  (SELECT 5, NULL, coalesce(sum(papers), 0)::int, 0 FROM papers_categoryday
   WHERE category_id = c.id AND date <= coalesce(%(until)s::date, 'infinity'))
) AS d ON true
WHERE c.code = %(code)s
"""


def read_days(*, code: str, until: dt.date | None, page: int, per_page: int) -> CategoryDays:
    """The category ``code`` and the days its page ``page`` (from ``until`` back) shows or
    links to, in one query; a 404 if there is no such category.

    The stream's days are read as far as the first entry of the next page (each has a paper
    at least, so that many days are enough): a later page reads more, the first page ~31.
    """
    days = min(page, MAX_PAGE) * per_page + 1
    params = {"code": code, "until": until, "recent": RECENT_DAYS, "days": days}
    # Prepared: planning its subqueries costs Postgres more than running them.
    rows = prepared_rows(_DAYS_SQL, params, using=replicas.reading_connection())
    if not rows:
        raise Http404(f"There is no category “{code}”.")
    pk, code, name, archive_code, archive_name, ingest_enabled = rows[0][:6]
    category = Category(
        id=pk,
        code=code,
        name=name,
        archive_code=archive_code,
        archive_name=archive_name,
        ingest_enabled=ingest_enabled,
    )
    parts: dict[int, list[DayCount]] = {1: [], 2: [], 3: [], 4: []}
    length = 0
    for *_, kind, date, papers, replacements in rows:
        if kind == 5:
            length = papers
        elif kind is not None:
            parts[kind].append(DayCount(date, papers, replacements))
    return CategoryDays(
        category=category,
        until=until,
        recent=parts[1],
        newer=parts[2][0].date if parts[2] else None,
        near=[day.date for day in parts[3]],
        stream=parts[4],
        length=length,
    )


class Stream:
    """A category's stream up to a day (newest first, ascending arXiv id within a day), for the
    paginator: its length, and which day holds an entry, from the days ``read_days`` read."""

    def __init__(self, found: CategoryDays) -> None:
        self.found = found

    def __len__(self) -> int:
        return self.found.length

    def date_at(self, index: int) -> dt.date:
        """The day of the entry at ``index`` (0-based) of the stream."""
        return self._day_at(index)[0].date

    def _day_at(self, index: int) -> tuple[DayCount, int]:
        # The day holding the entry at ``index``, and that entry's place within the day.
        for day in self.found.stream:
            if index < day.papers:
                return day, index
            index -= day.papers
        raise IndexError(index)


def page_of_days(
    *, found: CategoryDays, given: str | None, per_page: int
) -> tuple[Page, list[Day]]:
    """The page ``?page=`` asks for (``given``) and its days: the stream's entries by day,
    with the replacements of each day that ends here; a 404 past the last page.

    A day ends on this page unless the next page starts with it. Days with replacements but
    no new papers belong to the page whose stream passes their date, so none is unreachable.
    Stream entries and replacements are read in one query, each part bounded by its days'
    dates so that it reads no row of another day however long the category's history is.
    """
    stream = Stream(found)
    # The paginator only needs the length and counts pages: a range of it costs nothing.
    paginator: Paginator[Any] = Paginator(range(len(stream)), per_page)
    try:
        number = paginator.validate_number(number_of(given))
    except EmptyPage:
        raise Http404("There is no such page.") from None
    start = (number - 1) * per_page
    stop = min(start + per_page, len(stream))
    has_next = number < paginator.num_pages
    # Past the first page, a page's replacements begin at its first day.
    high = stream.date_at(start) if number > 1 and start < stop else found.until
    low = stream.date_at(stop) if has_next else None
    window = None
    if start < stop:
        first, skip = stream._day_at(start)
        last, _ = stream._day_at(stop - 1)
        window = (last.date, first.date, skip, stop - start)
    entries = entry_rows(category_id=found.category.pk, stream=window, replaced=(low, high))
    page = Page([e for e in entries if e.version is None], number, paginator)
    return page, group_days(
        listings=page.object_list, replacements=[e for e in entries if e.version is not None]
    )


def navigation(*, found: CategoryDays, opens_on: dt.date | None) -> DayNavigation:
    """Where the reader is among the category's announcement days, and the way to the others.
    ``opens_on``: the day the page opens on, when it is not ``found.until`` (a later page)."""
    if opens_on == found.until:
        shown, older = (found.near + [None, None])[:2]
        newer = found.newer
    else:
        # A later page opens on one of its stream days; the days around it may hold
        # replacements only, which the stream read leaves out: one query more.
        return _navigation_around(found=found, day=opens_on)
    missing = found.until if found.until is not None and found.until != shown else None
    return DayNavigation(
        shown=shown, newer=newer, older=older, missing=missing, recent=found.recent
    )


def _navigation_around(*, found: CategoryDays, day: dt.date | None) -> DayNavigation:
    # ``day`` is a day of the stream, so an announcement day: the days either side of it, in
    # one query.
    shown_days = CategoryDay.objects.filter(category_id=found.category.pk)
    older = shown_days.filter(date__lt=day).order_by("-date").values_list("date", flat=True)[:1]
    newer = shown_days.filter(date__gt=day).order_by("date").values_list("date", flat=True)[:1]
    around = list(older.union(newer, all=True))
    return DayNavigation(
        shown=day,
        newer=next((each for each in around if day is not None and each > day), None),
        older=next((each for each in around if day is not None and each < day), None),
        missing=None,
        recent=found.recent,
    )
