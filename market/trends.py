"""How many papers mentioned a term, week by week, over the whole ingested history.

``Mention`` rows are recorded only when a day's dividends are paid, for the terms listed then,
so they say nothing about the weeks before a term was listed. The trend is therefore counted
afresh with the same matcher that pays dividends (``market.highlighting``), over the title and
abstract of every visible paper, in the week (Monday to Sunday) of its first announcement as a
new submission or cross-list. A paper counts once per term, as for dividends.

One pass over the papers counts every listed term at once; the result is cached per term,
keyed by the term set's version and the newest listing, so an ingest or a term change starts a
fresh count. A halted or delisted term (which the
shared matcher leaves out) is counted alone with a matcher of its own.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import Max, Min, Q

from papers.calendar import NEW_YORK
from papers.models import Listing, Paper

from . import highlighting
from .highlighting import Matcher
from .models import Term

CACHE_SECONDS = 6 * 60 * 60


@dataclass(frozen=True, slots=True)
class WeekCount:
    week: dt.date  # the Monday
    papers: int


def week_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def listing_week(term: Term) -> dt.date:
    """The week in which the term was listed (its ``listed_at``, in arXiv's New York time)."""
    return week_of(term.listed_at.astimezone(NEW_YORK).date())


def announced_papers() -> Iterator[tuple[str, str, dt.date]]:
    """(title, abstract, first announcement date) of every visible, announced paper."""
    first = Min("listings__date", filter=Q(listings__announce_type__in=Listing.STREAM_TYPES))
    rows = (
        Paper.objects.visible()
        .annotate(first_announced=first)
        .filter(first_announced__isnull=False)
        .order_by()
        .values_list("title", "abstract", "first_announced")
    )
    return rows.iterator(chunk_size=2_000)


Counts = dict[int, Counter[dt.date]]  # term id → mentioning papers per week (the Monday)
Span = tuple[dt.date, dt.date] | None  # the first and last week with an announced paper


def count_by_week(
    matcher: Matcher, papers: Iterable[tuple[str, str, dt.date]]
) -> tuple[Counts, Span]:
    """Mentioning papers per week for every term of ``matcher``, and the weeks the papers
    span. Title and abstract are matched separately, as for dividends, so a phrase cannot span
    the two."""
    counts: Counts = defaultdict(Counter)
    first = last = None
    for title, abstract, day in papers:
        week = week_of(day)
        first = week if first is None or week < first else first
        last = week if last is None or week > last else last
        for term_id in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            counts[term_id][week] += 1
    return counts, (first, last) if first is not None else None


def _data_version() -> str:
    """Changes when terms change (the matcher's version) or a listing arrives (an ingest, which
    also brings replaced abstracts). A paper hidden or edited by hand shows within the cache
    lifetime."""
    newest = Listing.objects.aggregate(newest=Max("id"))["newest"]
    return f"{cache.get(highlighting.CACHE_KEY) or 'none'}:{newest}"


def _fill(counts: Counter[dt.date], span: Span) -> list[WeekCount]:
    if span is None:
        return []
    weeks = []
    week, last = span
    while week <= last:
        weeks.append(WeekCount(week, counts.get(week, 0)))
        week += dt.timedelta(days=7)
    return weeks


def weekly_mentions(*, term: Term) -> list[WeekCount]:
    """Mentioning papers per week, every week from the first ingested one to the latest, and
    to the listing week if that is later (weeks without a mention count 0); empty when nothing
    has been ingested.

    One query when cached; otherwise two more (the terms, the papers) and a scan of every
    paper with the matcher, for all listed terms at once.
    """
    # Read the version before the matcher: if terms change in between, the counts are stored
    # under the older version, which nobody asks for again.
    version = _data_version()
    key = f"market:trend:{version}:{term.pk}"
    cached = cache.get(key)
    if cached is None:
        if term.status == Term.Status.LISTED:
            cached = _count_listed_terms(version=version, wanted=term.pk)
        else:
            row = {"id": term.pk, "slug": term.slug, "phrase": term.phrase, "aliases": term.aliases}
            counts, span = count_by_week(Matcher.from_terms([row]), announced_papers())
            cached = (span, counts.get(term.pk, Counter()))
            cache.set(key, cached, CACHE_SECONDS)
    span, counts = cached
    if span is not None:
        # Reach the listing week even when no paper has been ingested since (or before) it,
        # so the chart can mark it.
        listed = listing_week(term)
        span = (min(span[0], listed), max(span[1], listed))
    return _fill(counts, span)


def _count_listed_terms(*, version: str, wanted: int) -> tuple[Span, Counter[dt.date]]:
    """Count every listed term in one pass and cache each; returns the ``wanted`` term's."""
    matcher = highlighting.current_matcher()
    by_term, span = count_by_week(matcher, announced_papers())
    entries = {
        f"market:trend:{version}:{pk}": (span, by_term.get(pk, Counter())) for pk in matcher.terms
    }
    cache.set_many(entries, CACHE_SECONDS)
    return span, by_term.get(wanted, Counter())
