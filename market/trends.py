"""How many papers mentioned a term, week by week, over the whole ingested history.

``Mention`` rows are recorded only when a day's dividends are paid, for the terms listed then,
so they say nothing about the weeks before a term was listed. The trend is therefore counted
afresh with the same matcher that pays dividends (``market.highlighting``, over all listed
terms, so the longest match wins as it does for dividends), over the title and abstract of
every visible paper, in the week (Monday to Sunday) of its first announcement as a new
submission or cross-list. A paper counts once per term, as for dividends.

Running the matcher over every paper of a long history takes seconds (bench/trends.py), so the
database first narrows the papers to those whose text contains the first word of the term's
phrase or an alias (a match must start with it), and the result is kept per term
(``peerrevenue.keep``), keyed by the stamps of what the count reads: the term set (phrases,
aliases, statuses) and the papers (any paper, listing or category written: an ingest, an
edited abstract, a paper hidden). Any of those starts a fresh count; nothing else does, and no
clock does. A halted or delisted term (which the shared matcher leaves out) gets a matcher of
its own.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from django.db.models import Max, Min, OuterRef, Q, Subquery

from papers.calendar import NEW_YORK
from papers.models import Listing, Paper
from peerrevenue import keep

from . import highlighting
from .highlighting import Matcher
from .models import Term

CHUNK = 2_000  # papers a query of announced_papers reads
_FIRST_WORD = re.compile(r"\w+")
_CONSONANT_Y = re.compile(r"[^\W\daeiou_]y$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class WeekCount:
    week: dt.date  # the Monday
    papers: int


def week_of(day: dt.date) -> dt.date:
    return day - dt.timedelta(days=day.weekday())


def listing_week(term: Term) -> dt.date:
    """The week in which the term was listed (its ``listed_at``, in arXiv's New York time)."""
    return week_of(term.listed_at.astimezone(NEW_YORK).date())


def first_words(phrases: Iterable[str]) -> set[str]:
    """Text that every match of these phrases contains: the first word of each, and for a
    one-word phrase ending in consonant + "y" its stem ("policies" matches "policy")."""
    words = set()
    for phrase in phrases:
        found = _FIRST_WORD.search(phrase)
        if found is None:
            continue
        word = found.group().lower()
        single = found.end() == len(phrase.rstrip())
        words.add(word[:-1] if single and _CONSONANT_Y.search(word) else word)
    return words


def announced_papers(
    *, containing: Iterable[str] | None = None
) -> Iterator[tuple[str, str, dt.date]]:
    """(title, abstract, first announcement date) of every visible, announced paper; with
    ``containing``, only those whose title or abstract contains one of these words (any case).

    Read in chunks of ``CHUNK`` papers by primary key, each chunk a query of its own: no
    server-side cursor, which a transaction pooler cannot keep between statements (and which,
    disabled, would have Django's ``.iterator()`` fetch the whole history into memory at once),
    and never more than one chunk of abstracts in memory. Papers written meanwhile may or may
    not be counted, as with one long query."""
    # A correlated look-up rather than a join with GROUP BY: each chunk then reads its
    # CHUNK papers by the primary key's index, not an aggregate over the whole history.
    first = Subquery(
        Listing.objects.filter(paper=OuterRef("pk"), announce_type__in=Listing.STREAM_TYPES)
        .order_by("date")
        .values("date")[:1]
    )
    papers = Paper.objects.visible()
    if containing is not None:
        wanted = Q(pk__in=[])
        for word in containing:
            wanted |= Q(title__icontains=word) | Q(abstract__icontains=word)
        papers = papers.filter(wanted)
    rows = (
        papers.annotate(first_announced=first)
        .filter(first_announced__isnull=False)
        .order_by("pk")
        .values_list("pk", "title", "abstract", "first_announced")
    )
    after = 0
    while True:
        chunk = list(rows.filter(pk__gt=after)[:CHUNK])
        for _, title, abstract, day in chunk:
            yield title, abstract, day
        if len(chunk) < CHUNK:
            return
        after = chunk[-1][0]


def count_by_week(
    matcher: Matcher, papers: Iterable[tuple[str, str, dt.date]]
) -> dict[int, Counter[dt.date]]:
    """Term id → mentioning papers per week (the Monday), for every term of ``matcher``.
    Title and abstract are matched separately, as for dividends, so a phrase cannot span
    the two."""
    counts: dict[int, Counter[dt.date]] = defaultdict(Counter)
    for title, abstract, day in papers:
        for term_id in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            counts[term_id][week_of(day)] += 1
    return counts


Span = tuple[dt.date, dt.date] | None  # the first and last week with an announced paper


def _span() -> Span:
    """The first and last week with an announced paper, in one query."""
    stream = Q(announce_type__in=Listing.STREAM_TYPES)
    found = Listing.objects.aggregate(
        first=Min("date", filter=stream), last=Max("date", filter=stream)
    )
    if found["first"] is None:
        return None
    return week_of(found["first"]), week_of(found["last"])


def _key(facts: keep.Facts, term_id: int) -> str:
    # The stamps of everything a count reads: the term set (the matcher) and the papers (their
    # text, visibility and first announcement).
    return keep.key("trend", facts["terms"], facts["papers"], term_id)


def count_all_listed() -> int:
    """Count every listed term's trend in one pass over the papers and keep each, so that the
    first reader of a term page after an ingest does not pay seconds for it (the ingest worker
    calls this once a day's listings are in). Returns how many terms were counted."""
    facts = keep.read(None, "papers")  # read before the papers, as for any kept piece
    if _span() is None:
        return 0
    matcher = highlighting.current_matcher(str(facts["terms"]))
    counts = count_by_week(matcher, announced_papers())
    names = {term_id: _key(facts, term_id) for term_id in matcher.terms}
    keep.get_or_make_many(names, lambda ids: {pk: counts.get(pk, Counter()) for pk in ids})
    return len(matcher.terms)


def weekly_mentions(*, term: Term, facts: keep.Facts) -> list[WeekCount]:
    """Mentioning papers per week, every week from the first ingested one to the latest, and
    to the listing week if that is outside them (weeks without a mention count 0); empty when
    nothing has been ingested. ``facts``: the request's, with the ``terms`` and ``papers``
    stamps, read before the term.

    One query when kept; otherwise two more (the terms, the candidate papers).
    """
    span = _span()
    if span is None:
        return []

    def count() -> Counter[dt.date]:
        phrases = [term.phrase, *(a for a in term.aliases or [] if isinstance(a, str))]
        if term.status == Term.Status.LISTED:
            matcher = highlighting.current_matcher(str(facts["terms"]))
        else:
            row = {"id": term.pk, "slug": term.slug, "phrase": term.phrase, "aliases": phrases[1:]}
            matcher = Matcher.from_terms([row])
        papers = announced_papers(containing=first_words(phrases))
        return count_by_week(matcher, papers).get(term.pk, Counter())

    counts = keep.get_or_make(_key(facts, term.pk), count)
    # Reach the listing week even when no paper has been ingested since (or before) it, so the
    # chart can mark it.
    listed = listing_week(term)
    week, last = min(span[0], listed), max(span[1], listed)
    weeks = []
    while week <= last:
        weeks.append(WeekCount(week, counts.get(week, 0)))
        week += dt.timedelta(days=7)
    return weeks
