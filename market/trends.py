"""How many papers mentioned a term, week by week, over the whole ingested history.

``Mention`` rows are recorded only when a day's dividends are paid, for the terms listed then,
so they say nothing about the weeks before a term was listed. The trend is therefore counted
afresh with the same matcher that pays dividends (``market.highlighting``), over the title and
abstract of every visible paper, in the week (Monday to Sunday) of its first announcement as a
new submission or cross-list. A paper counts once per term, as for dividends.

One pass over the papers counts every listed term at once; the result is cached per term,
keyed by the term set's version and by the newest listing and paper change, so an ingest, a
hidden paper or a term change starts a fresh count. A halted or delisted term (which the
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

CACHE_SECONDS = 24 * 60 * 60


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


def count_by_week(
    matcher: Matcher, papers: Iterable[tuple[str, str, dt.date]]
) -> dict[int, Counter[dt.date]]:
    """Term id → mentioning papers per week. Title and abstract are matched separately, as
    for dividends, so a phrase cannot span the two."""
    counts: dict[int, Counter[dt.date]] = defaultdict(Counter)
    for title, abstract, day in papers:
        week = week_of(day)
        for term_id in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            counts[term_id][week] += 1
    return counts


def _history_span() -> tuple[dt.date, dt.date] | None:
    span = Listing.objects.filter(announce_type__in=Listing.STREAM_TYPES).aggregate(
        first=Min("date"), last=Max("date")
    )
    if span["first"] is None:
        return None
    return week_of(span["first"]), week_of(span["last"])


def _data_version() -> str:
    newest = Listing.objects.aggregate(listing=Max("id"))["listing"]
    changed = Paper.objects.aggregate(changed=Max("modified_at"))["changed"]
    terms = cache.get(highlighting.CACHE_KEY) or "none"
    return f"{terms}:{newest}:{changed.timestamp() if changed else 0}"


def _fill(counts: Counter[dt.date], first: dt.date, last: dt.date) -> list[WeekCount]:
    weeks = []
    week = first
    while week <= last:
        weeks.append(WeekCount(week, counts.get(week, 0)))
        week += dt.timedelta(days=7)
    return weeks


def weekly_mentions(*, term: Term) -> list[WeekCount]:
    """Mentioning papers per week, every week from the first ingested one to the latest
    (weeks without a mention count 0); empty when nothing has been ingested."""
    span = _history_span()
    if span is None:
        return []
    # Read the version before the matcher: if terms change in between, the counts are stored
    # under the older version, which nobody asks for again.
    version = _data_version()
    key = f"market:trend:{version}:{term.pk}"
    counts = cache.get(key)
    if counts is None:
        if term.status == Term.Status.LISTED:
            counts = _count_listed_terms(version=version, wanted=term.pk)
        else:
            alone = Matcher.from_terms(
                [{"id": term.pk, "slug": term.slug, "phrase": term.phrase, "aliases": term.aliases}]
            )
            counts = count_by_week(alone, announced_papers()).get(term.pk, Counter())
            cache.set(key, counts, CACHE_SECONDS)
    return _fill(counts, *span)


def _count_listed_terms(*, version: str, wanted: int) -> Counter[dt.date]:
    """Count every listed term in one pass and cache each; returns the ``wanted`` term's."""
    matcher = highlighting.current_matcher()
    by_term = count_by_week(matcher, announced_papers())
    entries = {f"market:trend:{version}:{pk}": by_term.get(pk, Counter()) for pk in matcher.terms}
    cache.set_many(entries, CACHE_SECONDS)
    return by_term.get(wanted, Counter())
