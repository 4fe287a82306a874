"""Saved searches: a reader keeps a search (words, a phrase, an author), and the new papers
that match it come to them, on /searches/, in their stream and in their digest.

A paper is "new" for a window of announcement dates when its first announcement as a new
submission or cross-list falls in the window: a paper is brought once, whatever the number of
saved searches it matches and of categories it is listed in.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.db import IntegrityError, models, transaction
from django.db.models import Max, Q
from django.urls import reverse
from django.utils.safestring import SafeString

from papers import search
from papers.models import Listing, Paper

MAX_SAVED_SEARCHES = 20
# Enough for a digest or a page; a saved search that matches more is too broad to read.
MAX_MATCHES = 200


class SavedSearch(models.Model):
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_searches"
    )
    query = models.CharField(
        max_length=search.MAX_QUERY_LENGTH,
        help_text='As typed on /search/: words, "a phrase", au:name, ti:, abs:, cat:.',
    )
    # How its link to /search/ orders the results (papers.search.SORTS); what it brings to the
    # stream and the digest is new papers, newest first, either way.
    sort = models.CharField(
        max_length=20, choices=list(search.SORTS.items()), default=search.RELEVANCE
    )
    created_at = models.DateTimeField(auto_now_add=True)

    # Not columns: set by the saved-searches page, how many recent papers match, and why the
    # search cannot run (saved under older rules), if it cannot.
    new_matches: int
    problem: str | None

    class Meta:
        app_label = "accounts"
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "query"], name="unique_saved_search")
        ]

    def __str__(self) -> str:
        return f"{self.user}: {self.query}"

    def get_search_url(self) -> str:
        parameters = {"q": self.query}
        if self.sort != search.RELEVANCE:
            parameters["sort"] = self.sort
        return f"{reverse('papers:search')}?{urlencode(parameters)}"

    def parsed(self) -> search.Query:
        return search.parse(self.query)

    def runnable(self) -> search.Query | None:
        """The parsed query, or None (with ``problem`` set) if it cannot bring anything."""
        try:
            query = self.parsed()
        except search.SearchError as exc:
            self.problem = str(exc)
            return None
        if not _has_words(query):
            self.problem = "it has no words to match, only operators."
            return None
        self.problem = None
        return query


def _has_words(query: search.Query) -> bool:
    return any(re.search(r"\w", text) for text, _weight in query.text_parts())


class SavedSearchError(ValueError):
    """A search that cannot be saved, with a message the reader can act on."""


def save_search(*, user, text: str, sort: str = search.RELEVANCE) -> tuple[SavedSearch, bool]:
    """Keep a search for the user, its results ordered by ``sort`` (one of
    papers.search.SORTS); returns it and whether it is new. Saved again in another order,
    the search keeps the new order.

    Refuses what would never bring anything: an arXiv id (one paper, already out), filters
    without words, only words too common to search for, and more than MAX_SAVED_SEARCHES.
    """
    text = " ".join((text or "").split())
    if search.arxiv_id_in(text):
        raise SavedSearchError("An arXiv id is one paper: save words, a phrase or an author.")
    try:
        query = search.parse(text)
    except search.SearchError as exc:
        raise SavedSearchError(str(exc)) from None
    if not _has_words(query):
        raise SavedSearchError(
            'Save words, a "phrase" or an author (au:name), so that new papers can match it.'
        )
    if sort not in search.SORTS:
        raise SavedSearchError("Sort a saved search by relevance or by date (newest first).")
    existing = SavedSearch.objects.filter(user=user, query=text).first()
    if existing:
        if existing.sort != sort:
            existing.sort = sort
            existing.save(update_fields=["sort"])
        return existing, False
    try:
        # Kept, it runs on every visit to the reader's front page: refused now, not then.
        search.check_runs(query)
    except search.SearchError as exc:
        raise SavedSearchError(str(exc)) from None
    if query.words and not query.authors and not search.has_lexemes(query.words):
        raise SavedSearchError("Those words are too common to match anything: be more specific.")
    if SavedSearch.objects.filter(user=user).count() >= MAX_SAVED_SEARCHES:
        raise SavedSearchError(
            f"You can keep {MAX_SAVED_SEARCHES} saved searches; delete one to save another."
        )
    try:
        with transaction.atomic():
            return SavedSearch.objects.create(user=user, query=text, sort=sort), True
    except IntegrityError:  # the same search saved twice at once (a double click)
        return SavedSearch.objects.get(user=user, query=text), False


@dataclass
class SavedMatch:
    """A new paper matching one or more of a reader's saved searches, marked for display."""

    paper: Paper
    date: dt.date  # its first announcement
    searches: list[SavedSearch]
    title_text: str  # the title as plain text, the matched words between *asterisks*
    title_marked: SafeString  # the title as plain text in HTML, the matched words in <mark>


def saved_search_matches(
    *, user, since: dt.date, until: dt.date | None = None, limit: int = MAX_MATCHES
) -> list[SavedMatch]:
    """New papers (first announced from ``since`` to ``until``) matching any of the user's
    saved searches, newest first, each once, with the searches it matches and its matched
    words marked (``search_title``, ``search_authors``, ``search_snippet`` as on /search/).

    Three queries whatever the number of searches: the searches, the papers (see
    papers.search.new_matches) and their categories' names.
    """
    searches = []
    for saved in SavedSearch.objects.filter(user=user):
        query = saved.runnable()
        if query is not None:  # else saved under older rules: listed for the reader to delete
            searches.append((saved, query))
    papers = search.new_matches(
        queries=[query for _, query in searches], since=since, until=until, limit=limit
    )
    return [
        SavedMatch(
            paper=paper,
            date=paper.announced,
            searches=[searches[i][0] for i in paper.matched_queries],
            title_text=search.mark_plain(paper.title_text, paper.search_words or ()),
            title_marked=search.mark_text(paper.title_text, paper.search_words or ()),
        )
        for paper in papers
    ]


def saved_searches_source(*, user) -> Q:
    """For papers.streams.STREAM_SOURCES: the listings of papers that match any of the
    user's saved searches, merged into their front page (one query for the searches; the
    papers are a subquery of the stream's own query)."""
    condition = Q()
    for saved in SavedSearch.objects.filter(user=user):
        query = saved.runnable()
        if query is not None:
            condition |= search.condition(query)
    if not condition:
        return Q(pk__in=[])
    return Q(paper__in=Paper.objects.filter(condition).values("pk"))


def latest_announcement() -> dt.date | None:
    return Listing.objects.aggregate(latest=Max("date"))["latest"]
