"""A page of results: the count (capped), the ranked page of 25, marked, and the trigram
fallback's page when nothing matches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.utils.functional import cached_property

from ..models import Paper
from .marks import mark_matches, word_lexemes
from .parse import Query
from .query import has_lexemes, matching, narrowed_to_recent, ranked
from .similar import similar_papers, similar_words

RESULTS_PER_PAGE = 25
# Counting every match of a common word costs as much as finding them; past this many the page
# says "more than" and the reader narrows the search.
MAX_COUNTED = 1000
# How a page of results may be ordered: the ``sort`` parameter's values, and their names. The
# first is the default, left out of addresses.
RELEVANCE = "relevance"
NEWEST = "date"
SORTS = {RELEVANCE: "Relevance", NEWEST: "Newest first"}


def count_capped(papers: QuerySet[Paper]) -> int:
    """How many papers, counting no further than MAX_COUNTED + 1: a lean query (no ranking,
    no marks) that stops early on a common word."""
    return papers.order_by()[: MAX_COUNTED + 1].count()


class _CappedPaginator(Paginator):
    """Pages over at most MAX_COUNTED results, from a count made beforehand."""

    def __init__(
        self, object_list: QuerySet[Paper] | Sequence[Any], per_page: int, *, found: int
    ) -> None:
        super().__init__(object_list, per_page)
        self.found = found

    @cached_property
    def count(self) -> int:
        return min(self.found, MAX_COUNTED)


@dataclass
class Results:
    page: Page
    found: int  # at most MAX_COUNTED + 1
    similar: bool = False  # the trigram fallback's results, nothing matched exactly
    only_common_words: bool = False

    @property
    def more_than_counted(self) -> bool:
        return self.found > MAX_COUNTED


def results(query: Query, *, page: str | int | None = 1, sort: str = RELEVANCE) -> Results:
    """One page of results, with a constant number of queries: the matches' ids (at most
    MAX_COUNTED + 1 of them, which is the count), at most one more count and a check of the
    words when nothing matched, then the page itself, best or (``sort=NEWEST``) newest first.
    Past MAX_COUNTED matches either order looks at the newest papers only (ranked's
    ``recent``): newest first, those are the page anyway."""
    ids = list(matching(query).order_by().values_list("pk", flat=True)[: MAX_COUNTED + 1])
    found = len(ids)
    newest = sort == NEWEST
    if found or not query.has_text:
        papers = (
            ranked(query, recent=True, newest=newest)
            if found > MAX_COUNTED
            else ranked(query, among=ids, newest=newest)
        )
        current = _CappedPaginator(papers, RESULTS_PER_PAGE, found=found).get_page(page)
        current.object_list = list(current.object_list)
        mark_matches(current.object_list)
        return Results(page=current, found=found)
    similar = _similar_results(query, page=page) if query.fallback_text() else None
    if similar is not None:
        return similar
    only_common_words = bool(query.words) and not has_lexemes(query.words)
    empty = _CappedPaginator(Paper.objects.none(), RESULTS_PER_PAGE, found=0).get_page(1)
    return Results(page=empty, found=0, only_common_words=only_common_words)


def _similar_results(query: Query, *, page: str | int | None) -> Results | None:
    """The trigram fallback's page, or None when nothing is similar."""
    words = similar_words(query.fallback_text())
    if all(similar[0] == typed for typed, similar in words.items()):
        # Every word is spelled as in some name or title: nothing to correct (the words were
        # there but not together, or the query excluded them).
        return None
    papers = similar_papers(query, words)
    found = count_capped(papers)
    if not found:
        return None
    if found > MAX_COUNTED:  # as ranked(): order only the newest
        narrowed, oldest = narrowed_to_recent(query)
        papers = similar_papers(narrowed, words)
        if oldest:
            papers = papers.filter(arxiv_id__gte=oldest)
    current = _CappedPaginator(papers, RESULTS_PER_PAGE, found=found).get_page(page)
    current.object_list = list(current.object_list)
    # The similar words are what matched: marked in every form, as a query's words are.
    found_words = word_lexemes(word for alike in words.values() for word in alike)
    mark_matches(current.object_list, lexemes=found_words)
    return Results(page=current, found=found, similar=True)
