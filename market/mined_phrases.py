"""Phrases mined from recent papers as candidate terms: phrases that papers keep using and the
market does not list yet.

A phrase is one to three words; it counts once per paper that uses it (in the title or the
abstract, outside formulas). Phrases that start or end with a common English word, or that a
listed term already covers, are left out; a single word qualifies only when it is an acronym
(RDMA) or hyphenated (geo-distributed), since lone ordinary words ("memory") make poor shares.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass

from django.db.models import Max

from papers.models import Listing
from papers.typesetting import tex_to_text

from .highlighting import current_matcher
from .models import Term
from .proposals import ProposedCandidate, open_proposals, proposed_candidates
from .trends import announced_papers, first_words

_STOPWORD_TEXT = """
    a about above across after again against all also an and any are as at be because been
    before being below between both but by can could did do does doing down during each every
    few for from further give gives had has have having here how however i if in into is it its
    itself just less may more most much must new no nor not novel of off on once only or other
    our out over own paper per propose proposed results same several show shows such than that
    the their them then there these they this those through thus to too under up upon us use
    used using very via was we well were what when where which while who whom whose why will
    with within without would yet approach approaches method methods based work existing first
    two three one up
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
_MATH = re.compile(r"\$[^$]*\$")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]|[A-Za-z]")
MAX_WORDS = 3


@dataclass(frozen=True)
class Candidate:
    phrase: str
    papers: int


def phrases_in(text: str) -> set[str]:
    original = _WORD.findall(tex_to_text(_MATH.sub(" ", text)))
    words = [w.lower() for w in original]
    found: set[str] = set()
    for size in range(1, MAX_WORDS + 1):
        for start in range(len(words) - size + 1):
            gram = words[start : start + size]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS or len(gram[-1]) < 3:
                continue
            if size == 1 and not _is_distinctive(original[start]):
                continue
            found.add(" ".join(gram))
    return found


def _is_distinctive(word: str) -> bool:
    return "-" in word or (len(word) >= 2 and word.isupper())


def candidate_terms(
    *, since: dt.date | None = None, limit: int = 50, min_papers: int = 2
) -> list[Candidate]:
    """The most used unlisted phrases in papers announced since ``since`` (default: a week)."""
    since = since or _default_since()
    papers = (
        Listing.objects.filter(
            date__gte=since, announce_type__in=Listing.STREAM_TYPES, paper__hidden=False
        )
        .values_list("paper__title", "paper__abstract")
        .distinct()
    )
    counts: Counter[str] = Counter()
    for title, abstract in papers:
        counts.update(phrases_in(f"{title}\n{abstract}"))

    matcher = current_matcher()
    listed = {phrase.lower() for phrase in Term.objects.values_list("phrase", flat=True)}
    candidates = []
    # Longer phrases first among equals: "federated learning" says more than "federated".
    for phrase, papers_using in sorted(
        counts.items(), key=lambda item: (-item[1], -item[0].count(" "), item[0])
    ):
        if papers_using < min_papers:
            break
        if phrase in listed or any(
            match.start == 0 and match.end == len(phrase) for match in matcher.find_mentions(phrase)
        ):
            continue
        candidates.append(Candidate(phrase, papers_using))
        if len(candidates) == limit:
            break
    return candidates


def proposed_terms(*, since: dt.date | None = None) -> list[ProposedCandidate]:
    """Traders' open proposals, each with the papers that use it since ``since`` (default: a
    week, as for the candidates) and over the whole ingested history."""
    return proposed_candidates(since=since or _default_since(), papers=papers_for_proposals())


def papers_for_proposals():
    """The announced papers that may use an open proposal's phrase (see ``market.trends``)."""
    phrases = open_proposals().values_list("phrase", flat=True)
    return announced_papers(containing=first_words(phrases))


def _default_since() -> dt.date:
    newest = Listing.objects.aggregate(newest=Max("date"))["newest"]
    return (newest or dt.date.today()) - dt.timedelta(days=7)
