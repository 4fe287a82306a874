"""Term research: how many papers mention a term, month by month, in each ingested category.

What a trader weighs before buying: the term's history over the years (arXiv's bulk history
included) and its base rate, "about 14 papers a week in cs.DC mention it". Counted with the
matcher that pays dividends (``market.highlighting``: whole words, plurals, variants, aliases;
title and abstract matched apart), over every visible paper's new and cross-listings, and kept
in ``papers.MentionMonth``: one row per term, category and month, plus one per term and month
over all categories (each paper once). A page reads its term's rows, about twenty years of
months at most; nothing is counted on a reader's request.

Counted incrementally: a day's ingest recounts the month of that day; bulk history the months
it stored papers in; a term listed or changed, every month (the matcher changed). A month is
recounted whole, in one transaction (its rows deleted and written again), so a recount run
twice, or a day ingested twice, counts nothing twice.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db import connection, transaction

from papers.models import Category, Listing, MentionMonth, Paper
from peerrevenue import replicas

from . import highlighting
from .models import Term

CHUNK = 2_000  # papers a query reads
WEEKS_A_YEAR = 365.25 / 7


def month_of(day: dt.date) -> dt.date:
    return day.replace(day=1)


def _next_month(month: dt.date) -> dt.date:
    return (month + dt.timedelta(days=32)).replace(day=1)


def all_months() -> list[dt.date]:
    """Every month from the first stream listing's to the last's."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT min(date), max(date) FROM {Listing._meta.db_table}"  # noqa: S608 - the table name only
            " WHERE announce_type = ANY(%s)",
            [list(map(str, Listing.STREAM_TYPES))],
        )
        first, last = cursor.fetchone()
    months = []
    month = month_of(first) if first else None
    while month is not None and month <= last:
        months.append(month)
        month = _next_month(month)
    return months


def _papers(month: dt.date) -> Iterator[tuple[str, str, list[int]]]:
    """(title, abstract, category ids) of each visible paper with a stream listing in
    ``month``, read CHUNK papers a query by primary key (no server-side cursor: a transaction
    pooler could not keep it)."""
    end = _next_month(month)
    listings = (
        Listing.objects.filter(
            date__gte=month, date__lt=end, announce_type__in=Listing.STREAM_TYPES
        )
        .order_by("paper_id")
        .values_list("paper_id", "category_id")
    )
    after = 0
    while True:
        chunk = list(listings.filter(paper_id__gt=after)[: CHUNK * 2])
        if not chunk:
            return
        if len(chunk) == CHUNK * 2:
            # The last paper's listings may go on past the chunk: leave it to the next one.
            last = chunk[-1][0]
            if chunk[0][0] != last:
                chunk = [row for row in chunk if row[0] != last]
        by_paper: dict[int, list[int]] = {}
        for paper_id, category_id in chunk:
            by_paper.setdefault(paper_id, []).append(category_id)
        texts = (
            Paper.objects.visible()
            .filter(pk__in=list(by_paper))
            .values_list("pk", "title", "abstract")
        )
        for pk, title, abstract in texts:
            yield title, abstract, by_paper[pk]
        after = chunk[-1][0]


def count_month(month: dt.date, matcher: highlighting.Matcher) -> Counter[tuple[int, int | None]]:
    """(term id, category id or None for all) → mentioning papers listed in ``month``."""
    counts: Counter[tuple[int, int | None]] = Counter()
    for title, abstract, category_ids in _papers(month):
        for term_id in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            counts[term_id, None] += 1
            for category_id in set(category_ids):
                counts[term_id, category_id] += 1
    return counts


def recount(*, months: Iterable[dt.date] | None = None) -> int:
    """Recount the given months (the first days; None: all of them) for every listed term;
    returns how many months were counted."""
    chosen = sorted({month_of(m) for m in months}) if months is not None else all_months()
    matcher = highlighting.current_matcher()
    for month in chosen:
        # No term listed, nothing to find: the month's rows go without reading its papers.
        counts = count_month(month, matcher) if matcher.terms else Counter()
        with transaction.atomic():
            MentionMonth.objects.filter(month=month).delete()
            MentionMonth.objects.bulk_create(
                MentionMonth(term_id=term_id, category_id=category_id, month=month, papers=n)
                for (term_id, category_id), n in counts.items()
            )
            # Term pages show the new counts at once: these writes move the research stamp
            # (papers/sql/stamps.sql) that their papers piece is kept under, and nothing else.
    return len(chosen)


@dataclass(frozen=True)
class Year:
    year: int
    months: list[int]  # January to December
    total: int


@dataclass(frozen=True)
class Rate:
    code: str
    per_week: float

    @property
    def sentence(self) -> str:
        if self.per_week >= 1.5:
            return f"about {round(self.per_week):,} papers a week in {self.code} mention it"
        per_month = self.per_week * WEEKS_A_YEAR / 12
        if per_month >= 1.5:
            return f"about {round(per_month)} papers a month in {self.code} mention it"
        if per_month >= 0.5:
            return f"about one paper a month in {self.code} mentions it"
        return f"fewer than one paper a month in {self.code} mentions it"


@dataclass(frozen=True)
class Research:
    years: list[Year]  # oldest first
    rates: list[Rate]  # the busiest categories first
    total: int


def for_term(term: Term, *, today: dt.date | None = None, rates: int = 3) -> Research | None:
    """The term's months over the years and its base rates (per category, over the last
    twelve months counted: history may end before today; never the month in progress, which
    is partial); None before anything has been counted. One query: the term's months over all
    categories, and its recent months per category."""
    # A reader page's read: from the replica this request reads (the primary may be gone).
    reading = replicas.reading_connection()
    table = reading.ops.quote_name(MentionMonth._meta.db_table)
    categories = reading.ops.quote_name(Category._meta.db_table)
    with reading.cursor() as cursor:
        cursor.execute(
            f"WITH newest AS (SELECT max(month) AS month FROM {table})"  # noqa: S608 - table names only
            f" SELECT m.month, c.code, m.papers, newest.month FROM newest, {table} AS m"
            f" LEFT JOIN {categories} AS c ON c.id = m.category_id"
            " WHERE m.term_id = %s"
            " AND (m.category_id IS NULL OR m.month >= newest.month - interval '13 months')"
            " ORDER BY m.month",
            [term.pk],
        )
        rows = cursor.fetchall()
    overall = [(month, papers) for month, code, papers, _ in rows if code is None]
    if not overall:
        return None
    by_year: dict[int, list[int]] = {}
    for month, papers in overall:
        by_year.setdefault(month.year, [0] * 12)[month.month - 1] = papers
    years = [
        Year(year, by_year.get(year, [0] * 12), sum(by_year.get(year, [])))
        for year in range(overall[0][0].year, overall[-1][0].year + 1)
    ]
    last = min(rows[0][3], month_of(month_of(today or dt.date.today()) - dt.timedelta(days=1)))
    first = month_of(last - dt.timedelta(days=334))
    recent: Counter[str] = Counter()
    for month, code, papers, _ in rows:
        if code is not None and first <= month <= last:
            recent[code] += papers
    ranked = sorted(recent.items(), key=lambda item: (-item[1], item[0]))[:rates]
    return Research(
        years=years,
        rates=[Rate(code, papers / WEEKS_A_YEAR) for code, papers in ranked],
        total=sum(papers for _, papers in overall),
    )
