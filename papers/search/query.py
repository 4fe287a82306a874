"""The QuerySets that answer a Query: which papers match (``matching``, ``condition``), in what
order (``ranked``), and which are new for saved searches (``new_matches``).

The words go to PostgreSQL's ``websearch_to_tsquery`` (phrases in quotes, ``-word``, ``or``),
which accepts any text without a syntax error, against the stored search vector (title A,
authors B, abstract C; see papers.fulltext), answered by its GIN index.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import operator
import re
import typing
from collections.abc import Iterable, Sequence
from types import SimpleNamespace

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.lookups import Overlap
from django.contrib.postgres.search import SearchQuery, SearchQueryCombinable, SearchRank
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import Combinable, RawSQL
from django.db.models.functions import Cast

from peerrevenue import replicas

from .. import fulltext
from ..models import Category, Listing, Paper
from .marks import mark_matches
from .parse import Query

# Past MAX_COUNTED matches (papers.search.pages), ranking looks at the matches among this many
# newest papers.
RECENT_PAPERS = 5_000
# Quoted phrases that get a ranking term each (see _exact_phrases): each is a regular expression
# over the title and abstract of every match, and 300 characters can quote a hundred phrases.
MAX_EXACT_PHRASES = 3
# Columns a page of results never shows: the search vector alone is a few kilobytes a paper.
UNSHOWN = ("search_vector",)


class Matches(Func):
    """``vector @@ query``, usable inside filters and conditional expressions."""

    arg_joiner = " @@ "
    template = "(%(expressions)s)"
    output_field = BooleanField()


def tsquery(text: str) -> SearchQuery:
    return SearchQuery(text, config=fulltext.CONFIG, search_type="websearch")


def _combined(query: Query) -> SearchQueryCombinable | None:
    """One tsquery for the whole query: every part, prefixed parts labelled with the weight of
    their field (title A, authors B, abstract C)."""
    combined: SearchQueryCombinable | None = None
    for text, weight in query.text_parts():
        part: SearchQueryCombinable = tsquery(text)
        if weight:
            part = fulltext.WeightedQuery(part, weight=weight.upper())
        combined = part if combined is None else combined & part
    return combined


def _as_text(combined: SearchQueryCombinable) -> Cast:
    """The tsquery as PostgreSQL parsed it (stems, negations), for mark_matches()."""
    # A tsquery is an Expression at run time; the stubs give its combinations no Combinable.
    return Cast(typing.cast(Combinable, combined), TextField())


def match_condition(query: Query) -> Q | None:
    """The text condition of a query on papers: one ``@@`` on the search vector for the words,
    names and abstract words, and one on the title's words for each ``ti:`` part (the search
    vector cannot tell a title word from the same word in an abstract). Both are columns of
    one GIN index, which intersects them, rarest entries first."""
    condition = None
    rest = None
    for text, weight in query.text_parts():
        if weight == "a":
            part = Q(Matches(fulltext.title_vector(), tsquery(text)))
            condition = part if condition is None else condition & part
        else:
            text_part: SearchQueryCombinable = tsquery(text)
            if weight:
                text_part = fulltext.WeightedQuery(text_part, weight=weight.upper())
            rest = text_part if rest is None else rest & text_part
    if rest is not None:
        words = Q(Matches(F("search_vector"), rest))
        condition = words if condition is None else condition & words
    return condition


def _in_categories(query: Query) -> Q:
    """In any of the query's categories, primary or cross-listed (none: no condition)."""
    if not query.categories:
        return Q()
    codes = Value(list(query.categories), output_field=ArrayField(TextField()))
    return Q(Overlap(fulltext.CategoryCodes("categories"), codes))


def condition(query: Query) -> Q:
    """What a paper must satisfy to match, dates aside: the words and the categories. Several
    queries' conditions can be OR-ed into one query (saved searches)."""
    text = match_condition(query)
    return (text if text is not None else Q()) & _in_categories(query)


def filtered(papers: QuerySet[Paper], query: Query) -> QuerySet[Paper]:
    """The papers the query's filters allow, words aside: visible, in its categories,
    announced in its dates."""
    papers = papers.filter(hidden=False)
    if query.categories:
        papers = papers.filter(_in_categories(query))
    if query.date_from or query.date_to:
        # Announced in the range, in any category and in any way: new, cross-listed or
        # replaced (a paper known here only by a replacement was announced that day too).
        listings = Listing.objects.filter(paper=OuterRef("pk"))
        if query.date_from:
            listings = listings.filter(date__gte=query.date_from)
        if query.date_to:
            listings = listings.filter(date__lte=query.date_to)
        papers = papers.filter(Exists(listings))
    return papers


def matching(query: Query, papers: QuerySet[Paper] | None = None) -> QuerySet[Paper]:
    """Visible papers matching the query, unordered and unannotated (for counts and ids)."""
    papers = filtered(Paper.objects.all() if papers is None else papers, query)
    condition = match_condition(query)
    return papers.filter(condition) if condition is not None else papers


# Newest first: the first version's date, then the arXiv id (a paper whose date is not known
# here yet goes after the dated ones, by its id).
NEWEST_FIRST = (F("submitted_at").desc(nulls_last=True), F("arxiv_id").desc())


def ranked(
    query: Query,
    *,
    recent: bool = False,
    among: Sequence[int] | None = None,
    newest: bool = False,
) -> QuerySet[Paper]:
    """Matching papers, best first, each with the query as PostgreSQL parsed it (for
    papers.search.marks.mark_matches()); ``newest``: newest first instead (NEWEST_FIRST).

    ``recent``: rank only the matches among the newest RECENT_PAPERS papers (narrowed_to_recent).
    A common word matches a third of all papers, and ranking reads the vector of every paper
    it ranks; the newest papers are a range of arXiv ids, a column of the search index, which
    intersects it with the words itself, so the work stays bounded however large the table
    grows.

    ``among``: the ids of all the matches, already found: the page is then read by primary
    key, without checking every candidate of the text index again (a phrase of two common
    words has thousands of candidates for a few matches).
    """
    combined = _combined(query)
    exact = _exact_phrases(query)
    papers: QuerySet[Paper]
    if among is not None:
        papers = Paper.objects.filter(
            RawSQL(f'"{Paper._meta.db_table}"."id" = ANY(%s)', (list(among),), BooleanField())
        )
        if combined is None:
            return papers.order_by(*NEWEST_FIRST if newest else ["-arxiv_id"]).defer(*UNSHOWN)
    elif combined is None:  # filters only: newest first
        return matching(query).order_by(*NEWEST_FIRST if newest else ["-arxiv_id"]).defer(*UNSHOWN)
    else:
        oldest = None
        if recent:
            query, oldest = narrowed_to_recent(query)
        papers = matching(query)
        if oldest:
            papers = papers.filter(arxiv_id__gte=oldest)
    papers = papers.defer(*UNSHOWN).annotate(
        rank=SearchRank(F("search_vector"), combined),
        # The query as PostgreSQL parsed it (stems, negations), for mark_matches().
        search_query=_as_text(combined),
    )
    if newest:
        return papers.order_by(*NEWEST_FIRST)
    if exact is None:
        return papers.order_by(F("rank").desc(), F("arxiv_id").desc())
    return papers.annotate(exact=exact).order_by(
        F("exact").desc(), F("rank").desc(), F("arxiv_id").desc()
    )


def _exact_phrases(query: Query) -> Combinable | None:
    """How many of the query's quoted phrases a paper has word for word, case aside, in its
    title or abstract (or the one part a ``ti:`` or ``abs:`` phrase names); None without
    phrases. ranked() orders by it before ts_rank: ``websearch_to_tsquery`` finds a phrase
    by stems and positions, so "An Agentic System for" ('agent' <-> 'system') matches
    "Multi-Agent Systems" too, and ts_rank may well prefer that paper.

    Read on the plain columns (the TeX as arXiv sends it, which is the text itself but for
    the odd macro; the typeset HTML would have to be turned to text on every row). It is only
    in the ORDER BY, so PostgreSQL evaluates it on the rows that already matched the tsquery
    (or among their ids), never on the table. It costs some 20 µs a row all the same
    (decompressing the abstract, the case-blind regular expression): the page query for a
    quoted word with 690 matches took 17 ms, against 3 ms unquoted (bench/search.py, 2,000
    papers); MAX_COUNTED bounds the rows."""
    terms = []
    for phrase, part in query.exact_phrases()[:MAX_EXACT_PHRASES]:
        pattern = _phrase_pattern(phrase)
        in_title, in_abstract = Q(title__iregex=pattern), Q(abstract__iregex=pattern)
        where = {"a": in_title, "c": in_abstract}.get(part or "", in_title | in_abstract)
        terms.append(
            Case(When(where, then=Value(1)), default=Value(0), output_field=IntegerField())
        )
    return functools.reduce(operator.add, terms) if terms else None


def _phrase_pattern(phrase: str) -> str:
    """A PostgreSQL regular expression for the phrase's words, in order, as whole words, with
    any whitespace between them (arXiv wraps a title or abstract anywhere). Python's
    re.escape puts a backslash only before punctuation, which PostgreSQL reads as the
    character itself."""
    pattern = r"\s+".join(re.escape(word) for word in phrase.split())
    start = r"\m" if re.match(r"\w", phrase) else ""  # \m and \M: a word's start and end
    end = r"\M" if re.search(r"\w$", phrase) else ""
    return f"{start}{pattern}{end}"


def narrowed_to_recent(query: Query) -> tuple[Query, str | None]:
    """The query narrowed to the newest RECENT_PAPERS papers: with dates, to the range's last
    RECENT_PAPERS announcements (the query with a later ``date_from``; the newest papers of
    all may all lie after the range), else to the newest papers of all (the oldest arXiv id
    of them, to filter on). Read first, as a value: the planner then knows how narrow it is."""
    if query.date_from or query.date_to:
        announced = Listing.objects.all()
        if query.date_from:
            announced = announced.filter(date__gte=query.date_from)
        if query.date_to:
            announced = announced.filter(date__lte=query.date_to)
        since = list(
            announced.order_by("-date").values_list("date", flat=True)[
                RECENT_PAPERS - 1 : RECENT_PAPERS
            ]
        )
        return (dataclasses.replace(query, date_from=since[0]) if since else query), None
    oldest = list(
        Paper.objects.order_by("-arxiv_id").values_list("arxiv_id", flat=True)[
            RECENT_PAPERS - 1 : RECENT_PAPERS
        ]
    )
    return query, (oldest[0] if oldest else None)


def has_lexemes(text: str) -> bool:
    """Whether the words leave anything to search for once stop words are dropped."""
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            "SELECT numnode(websearch_to_tsquery(%s::regconfig, %s))", [fulltext.CONFIG, text]
        )
        return cursor.fetchone()[0] > 0


def find_paper(arxiv_id: str) -> Paper | None:
    """The visible paper with that id, however the reader cased it."""
    papers = Paper.objects.visible()
    paper = papers.filter(arxiv_id=arxiv_id).first()
    if paper is None and any(c.isalpha() for c in arxiv_id):  # old style: math.GT/0309136
        paper = papers.filter(arxiv_id__iexact=arxiv_id).first()
    return paper


def label_categories(papers: Iterable[Paper]) -> None:
    """Set ``search_category`` on each paper, its label in a list of results as in the
    listings: the primary category's code and name (one query)."""
    papers = list(papers)
    codes = {paper.primary_category for paper in papers}
    names = dict(Category.objects.filter(code__in=codes).values_list("code", "name"))
    for paper in papers:
        code = paper.primary_category
        paper.search_category = SimpleNamespace(code=code, name=names.get(code, code))


def _first_announced_in(*, since: dt.date, until: dt.date | None) -> Q:
    stream = Listing.objects.filter(paper=OuterRef("pk"), announce_type__in=Listing.STREAM_TYPES)
    in_window = stream.filter(date__gte=since)
    if until is not None:
        in_window = in_window.filter(date__lte=until)
    return Q(Exists(in_window)) & ~Q(Exists(stream.filter(date__lt=since)))


def new_matches(
    *, queries: Sequence[Query], since: dt.date, until: dt.date | None = None, limit: int = 200
) -> list[Paper]:
    """Papers first announced (new or cross-list) from ``since`` to ``until`` that match any
    of the queries, newest first, each once: what saved searches bring to a reader.

    Each paper gets ``announced`` (its first announcement), ``matched_queries`` (indexes into
    ``queries``), the marks of mark_matches() and the label of label_categories(). One query
    for the papers, whatever the number of queries: their conditions are OR-ed, each one's
    result is a column, and the words of all of them are marked.
    """
    if not any(query.has_text for query in queries):
        return []
    any_query = Q()
    flags: dict[str, Value | ExpressionWrapper] = {}
    combined: SearchQueryCombinable | None = None
    for i, query in enumerate(queries):
        if not query.has_text:  # filters alone would bring every paper of a category
            flags[f"matched_{i}"] = Value(False)
            continue
        any_query |= condition(query)
        flags[f"matched_{i}"] = ExpressionWrapper(condition(query), output_field=BooleanField())
        for text, _weight in query.text_parts():
            combined = tsquery(text) if combined is None else combined | tsquery(text)
    assert combined is not None  # some query has text (checked above), so it has words
    first = (
        Listing.objects.filter(paper=OuterRef("pk"), announce_type__in=Listing.STREAM_TYPES)
        .values("paper")
        .annotate(first=Min("date"))
        .values("first")[:1]
    )
    papers = (
        Paper.objects.filter(hidden=False)
        .filter(_first_announced_in(since=since, until=until))
        .filter(any_query)
        .defer(*UNSHOWN)
        .annotate(
            **flags,
            announced=Subquery(first),
            # The queries as PostgreSQL parsed them, for mark_matches().
            search_query=_as_text(combined),
        )
        .order_by("-announced", "arxiv_id")
    )
    papers = list(papers[:limit])
    for paper in papers:
        paper.matched_queries = [i for i in range(len(queries)) if getattr(paper, f"matched_{i}")]
    mark_matches(papers)
    label_categories(papers)
    return papers
