"""Paper search: what a reader types, parsed into a query, and the QuerySets that answer it.

The words go to PostgreSQL's ``websearch_to_tsquery`` (phrases in quotes, ``-word``, ``or``),
which accepts any text without a syntax error, against the stored search vector (title A,
authors B, abstract C; see papers.fulltext). ``au:``, ``ti:`` and ``abs:`` restrict words to one
part; ``cat:`` and the form's filters restrict the papers. When nothing matches, the words of
names and titles most like the typed ones, by trigrams, catch misspellings ("Lamprt").
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as dt
import difflib
import functools
import html
import operator
import re
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from django.contrib.postgres.search import (
    SearchHeadline,
    SearchQuery,
    SearchQueryCombinable,
    SearchRank,
)
from django.core.exceptions import ValidationError
from django.core.paginator import Page, Paginator
from django.db import connection
from django.db.models import (
    BooleanField,
    Case,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    Func,
    Min,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
    Value,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.utils.functional import cached_property
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from Stemmer import Stemmer

from . import fulltext
from .identifiers import ARXIV_ID, validate_category_code
from .models import Category, Listing, NameWord, Paper

MAX_QUERY_LENGTH = 300
RESULTS_PER_PAGE = 25
# Counting every match of a common word costs as much as finding them; past this many the page
# says "more than" and the reader narrows the search.
MAX_COUNTED = 1000
# Past MAX_COUNTED matches, ranking looks at the matches among this many newest papers.
RECENT_PAPERS = 5_000
MAX_PREFIXES = 10
# Columns a page of results never shows: the search vector alone is a few kilobytes a paper.
UNSHOWN = ("search_vector",)
# Trigram similarity: "lamprt" and "lamport" 0.5, "ranal" and "raynal" 0.44, "lnch" and
# "lynch" 0.38.
SIMILARITY_THRESHOLD = 0.35
SIMILARITY_TIE = 0.05
# The fallback looks for papers with any of this many words like each typed word.
SIMILAR_WORDS = 5
# Words shorter than this have too few trigrams to tell names apart.
MIN_SIMILAR_WORD = 4

# ts_headline marks matches with these (private-use code points, absent from real text), so
# the text around them can be escaped before they become <mark> elements.
_START, _STOP = "\ue000", "\ue001"

_PREFIX = re.compile(r'(?<!\S)(au|ti|abs|cat):("[^"]*"?|\S*)', re.IGNORECASE)
_ARXIV_ID = re.compile(
    rf"""\s*(?:
        (?:arxiv:\s*)?(?P<bare>{ARXIV_ID})(?:v\d+)?
      | (?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/
        (?P<url>{ARXIV_ID})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)
# Characters no search needs and PostgreSQL cannot take (NUL) or that only hide text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class SearchError(ValueError):
    """A search that cannot run, with a message the reader can act on."""


@dataclass(frozen=True)
class Query:
    words: str = ""
    authors: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()
    abstracts: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    date_from: dt.date | None = None
    date_to: dt.date | None = None

    @property
    def has_text(self) -> bool:
        return bool(self.words or self.authors or self.titles or self.abstracts)

    def text_parts(self) -> list[tuple[str, str | None]]:
        """(websearch text, weight it is restricted to or None), one per part of the query."""
        parts: list[tuple[str, str | None]] = [(self.words, None)] if self.words else []
        for values, weight in ((self.titles, "a"), (self.authors, "b"), (self.abstracts, "c")):
            parts.extend((value, weight) for value in values)
        return parts

    @property
    def plain_words(self) -> str:
        """The free words without websearch operators, e.g. to look up market terms."""
        return _plain(self.words)

    def fallback_text(self) -> str:
        """The words to compare by trigrams when nothing matches: free words and names,
        without the websearch operators."""
        words = _plain(" ".join([self.words, *self.authors, *self.titles])).split()
        return " ".join(word for word in words if len(word) >= MIN_SIMILAR_WORD)


def _plain(text: str) -> str:
    text = re.sub(r'(?<!\S)-\S*|"|\bor\b', " ", text, flags=re.IGNORECASE)
    return " ".join(text.split())


def arxiv_id_in(text: str) -> str | None:
    """The arXiv id when the whole text is one (``2611.01234v2``, ``arXiv:cs/0101001``, an
    arxiv.org abs/pdf/html address), else None."""
    match = _ARXIV_ID.fullmatch(text or "")
    if not match:
        return None
    return match.group("bare") or match.group("url")


def find_paper(arxiv_id: str) -> Paper | None:
    """The visible paper with that id, however the reader cased it."""
    papers = Paper.objects.visible()
    paper = papers.filter(arxiv_id=arxiv_id).first()
    if paper is None and any(c.isalpha() for c in arxiv_id):  # old style: math.GT/0309136
        paper = papers.filter(arxiv_id__iexact=arxiv_id).first()
    return paper


def parse(
    text: str,
    *,
    categories: Iterable[str] = (),
    date_from: dt.date | None = None,
    date_to: dt.date | None = None,
) -> Query:
    """Split what the reader typed into free words and ``au:``/``ti:``/``abs:``/``cat:`` parts.

    A prefix takes one word or a quoted phrase: ``au:lamport``, ``ti:"byzantine agreement"``.
    Raises SearchError for what cannot be searched, saying why.
    """
    text = text or ""
    if "\x00" in text:
        raise SearchError("Your search contains a NUL character; remove it and search again.")
    text = _CONTROL.sub(" ", text).strip()
    if len(text) > MAX_QUERY_LENGTH:
        raise SearchError(
            f"Your search is {len(text)} characters long; searches can be at most "
            f"{MAX_QUERY_LENGTH}. Keep the words that matter most."
        )
    found: dict[str, list[str]] = {"au": [], "ti": [], "abs": [], "cat": []}
    prefixes = list(_PREFIX.finditer(text))
    if len(prefixes) > MAX_PREFIXES:
        raise SearchError(f"Use at most {MAX_PREFIXES} au:, ti:, abs: or cat: parts in a search.")
    for match in prefixes:
        prefix, value = match.group(1).lower(), match.group(2)
        if not value.strip('"').strip():
            raise SearchError(
                f"“{prefix}:” needs something right after it, e.g. "
                + {
                    "au": 'au:lamport or au:"leslie lamport"',
                    "ti": 'ti:consensus or ti:"byzantine agreement"',
                    "abs": "abs:gossip",
                    "cat": "cat:cs.DC",
                }[prefix]
                + "."
            )
        if prefix == "cat":
            value = value.strip('"')
        elif value.startswith('"') and not value.endswith('"'):
            value += '"'  # a phrase left open at the end of the search
        found[prefix].append(value)
    words = " ".join(_PREFIX.sub(" ", text).split())
    all_categories = [*categories, *found["cat"]]
    for code in all_categories:
        try:
            validate_category_code(code)
        except ValidationError:
            raise SearchError(
                f"“{code}” is not an arXiv category code; use one like cs.DC or math.GT."
            ) from None
    if date_from and date_to and date_from > date_to:
        raise SearchError("The “from” date is after the “to” date; swap them.")
    return Query(
        words=words,
        authors=tuple(found["au"]),
        titles=tuple(found["ti"]),
        abstracts=tuple(found["abs"]),
        categories=tuple(dict.fromkeys(all_categories)),
        date_from=date_from,
        date_to=date_to,
    )


# --------------------------------------------------------------------------------------------
# QuerySets
# --------------------------------------------------------------------------------------------


class _Matches(Func):
    """``vector @@ query``, usable inside filters and conditional expressions."""

    arg_joiner = " @@ "
    template = "(%(expressions)s)"
    output_field = BooleanField()


def tsquery(text: str) -> SearchQuery:
    return SearchQuery(text, config=fulltext.CONFIG, search_type="websearch")


def _combined(query: Query):
    """One tsquery for the whole query: every part, prefixed parts labelled with the weight of
    their field (title A, authors B, abstract C)."""
    combined = None
    for text, weight in query.text_parts():
        part: SearchQueryCombinable = tsquery(text)
        if weight:
            part = fulltext.WeightedQuery(part, weight=weight.upper())
        combined = part if combined is None else combined & part
    return combined


def match_condition(query: Query) -> Q | None:
    """The text condition of a query on papers, answered by the GIN indexes: one ``@@`` on
    the search vector for the words, names and abstract words, and one on the title index
    for each ``ti:`` part (the search vector's index cannot tell a title word from the same
    word in an abstract, and would recheck every paper that has it anywhere)."""
    condition = None
    rest = None
    for text, weight in query.text_parts():
        if weight == "a":
            part = Q(_Matches(fulltext.title_vector(), tsquery(text)))
            condition = part if condition is None else condition & part
        else:
            text_part: SearchQueryCombinable = tsquery(text)
            if weight:
                text_part = fulltext.WeightedQuery(text_part, weight=weight.upper())
            rest = text_part if rest is None else rest & text_part
    if rest is not None and condition is not None:
        # With ti: parts, the title index narrows the candidates and the other words are
        # checked on each of them: a title has some ten words against an abstract's two
        # hundred, so a title word is far rarer than the same word anywhere, and intersecting
        # the title index with a common word's 100,000 entries cost more than all the rest.
        # (COALESCE hides the column from the planner: an index on it no longer applies.)
        vector = Func(F("search_vector"), Value(""), function="COALESCE")
        condition &= Q(_Matches(vector, rest))
    elif rest is not None:
        condition = Q(_Matches(F("search_vector"), rest))
    return condition


def _in_categories(query: Query) -> Q:
    any_category = Q()
    for code in query.categories:
        any_category |= Q(categories__contains=[code])
    return any_category


def condition(query: Query) -> Q:
    """What a paper must satisfy to match, dates aside: the words and the categories. Several
    queries' conditions can be OR-ed into one query (saved searches)."""
    text = match_condition(query)
    return (text if text is not None else Q()) & _in_categories(query)


def _filtered(papers: QuerySet[Paper], query: Query) -> QuerySet[Paper]:
    papers = papers.filter(hidden=False)
    if query.categories:
        papers = papers.filter(_in_categories(query))
    if query.date_from or query.date_to:
        # Announced in the range: a new submission or a cross-list, in any category.
        listings = Listing.objects.filter(
            paper=OuterRef("pk"), announce_type__in=Listing.STREAM_TYPES
        )
        if query.date_from:
            listings = listings.filter(date__gte=query.date_from)
        if query.date_to:
            listings = listings.filter(date__lte=query.date_to)
        papers = papers.filter(Exists(listings))
    return papers


def matching(query: Query, papers: QuerySet[Paper] | None = None) -> QuerySet[Paper]:
    """Visible papers matching the query, unordered and unannotated (for counts and ids)."""
    papers = _filtered(Paper.objects.all() if papers is None else papers, query)
    condition = match_condition(query)
    return papers.filter(condition) if condition is not None else papers


def ranked(
    query: Query, *, recent: bool = False, among: Sequence[int] | None = None
) -> QuerySet[Paper]:
    """Matching papers, best first, each with the query as PostgreSQL parsed it (for
    mark_matches()).

    ``recent``: rank only the matches among the newest RECENT_PAPERS papers (_recent). A
    common word matches a third of all papers, and ranking reads the vector of every paper it
    ranks; the newest papers are a range of the arXiv id index, which PostgreSQL intersects
    with the text index, so the work stays bounded however large the table grows.

    ``among``: the ids of all the matches, already found: the page is then read by primary
    key, without checking every candidate of the text index again (a phrase of two common
    words has thousands of candidates for a few matches).
    """
    combined = _combined(query)
    if among is not None:
        papers: QuerySet[Paper] = Paper.objects.filter(
            RawSQL(f'"{Paper._meta.db_table}"."id" = ANY(%s)', (list(among),), BooleanField())
        )
        if combined is None:
            return papers.order_by("-arxiv_id").defer(*UNSHOWN)
    elif combined is None:  # filters only: newest first
        return matching(query).order_by("-arxiv_id").defer(*UNSHOWN)
    else:
        oldest = None
        if recent:
            query, oldest = _recent(query)
        papers = matching(query)
        if oldest:
            papers = papers.filter(arxiv_id__gte=oldest)
    return (
        papers.defer(*UNSHOWN)
        .annotate(
            rank=SearchRank(F("search_vector"), combined),
            # The query as PostgreSQL parsed it (stems, negations), for mark_matches().
            search_query=Cast(combined, TextField()),
        )
        .order_by(F("rank").desc(), F("arxiv_id").desc())
    )


def _recent(query: Query) -> tuple[Query, str | None]:
    """The query narrowed to the newest RECENT_PAPERS papers: with dates, to the range's last
    RECENT_PAPERS announcements (the query with a later ``date_from``; the newest papers of
    all may all lie after the range), else to the newest papers of all (the oldest arXiv id
    of them, to filter on). Read first, as a value: the planner then knows how narrow it is."""
    if query.date_from or query.date_to:
        announced = Listing.objects.filter(announce_type__in=Listing.STREAM_TYPES)
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


def annotate_headlines(papers: QuerySet[Paper], combined: SearchQuery) -> QuerySet[Paper]:
    options: dict[str, Any] = {"config": fulltext.CONFIG, "start_sel": _START, "stop_sel": _STOP}
    return papers.annotate(
        title_headline=SearchHeadline(
            fulltext.SearchText(F("title_html")), combined, highlight_all=True, **options
        ),
        authors_headline=SearchHeadline("authors_text", combined, highlight_all=True, **options),
        abstract_headline=SearchHeadline(
            fulltext.SearchText(F("abstract_html")),
            combined,
            max_fragments=2,
            max_words=30,
            min_words=12,
            fragment_delimiter=" … ",
            **options,
        ),
    )


def similar_words(text: str) -> dict[str, list[str]]:
    """For each word of the text (accent-folded, lowercase), the words of names and titles
    most like it ("lamprt": ["lamport"]); a word with none is left out.

    One query on the table of distinct words (papers.models.NameWord), whose trigram index
    finds the candidates (``%``: trigram similarity at least pg_trgm's default, 0.3). The
    closest one counts if it reaches SIMILARITY_THRESHOLD, and so do those as close as it
    (within SIMILARITY_TIE), at most SIMILAR_WORDS: a typo is usually nearest to the word
    meant, and a word of many papers' names would bring in papers of no interest."""
    needles = list(dict.fromkeys(_fold(word) for word in text.split()))
    if not needles:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT n.needle, c.word
            FROM unnest(%s::text[]) AS n(needle)
            CROSS JOIN LATERAL (
                SELECT word, s, max(s) OVER () AS best
                FROM (
                    SELECT word, similarity(word, n.needle) AS s
                    FROM {NameWord._meta.db_table}
                    WHERE word %% n.needle
                    ORDER BY s DESC, word
                    LIMIT %s
                ) AS candidates
            ) AS c
            WHERE c.s >= %s AND c.s >= c.best - %s
            ORDER BY n.needle, c.s DESC, c.word
            """,
            [needles, SIMILAR_WORDS, SIMILARITY_THRESHOLD, SIMILARITY_TIE],
        )
        found: dict[str, list[str]] = {}
        for needle, word in cursor.fetchall():
            found.setdefault(needle, []).append(word)
    return found


def similar_papers(query: Query, words: dict[str, list[str]]) -> QuerySet[Paper]:
    """The fallback: papers whose names or title have, for each typed word, one of the words
    like it (``words``, from similar_words()), those with the closest words first. The
    GIN index answers it: the words are looked up as title and author words of the vector."""
    if not words:
        return Paper.objects.none()
    condition = Q()
    closeness = []
    for similar in words.values():
        parts = [fulltext.WeightedQuery(tsquery(word), weight="AB") for word in similar]
        condition &= Q(_Matches(F("search_vector"), functools.reduce(operator.or_, parts)))
        closeness += [
            When(_Matches(F("search_vector"), part), then=Value(-i)) for i, part in enumerate(parts)
        ]
    return (
        _filtered(Paper.objects.all(), query)
        .filter(condition)
        .defer(*UNSHOWN)
        .annotate(closeness=Case(*closeness, default=Value(-len(closeness))))
        .order_by(F("closeness").desc(), F("arxiv_id").desc())
    )


def has_lexemes(text: str) -> bool:
    """Whether the words leave anything to search for once stop words are dropped."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT numnode(websearch_to_tsquery(%s::regconfig, %s))", [fulltext.CONFIG, text]
        )
        return cursor.fetchone()[0] > 0


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
    ``queries``), the marks of mark() and the label of label_categories(). One query for the
    papers, whatever the number of queries: their conditions are OR-ed, each one's result is a
    column, and PostgreSQL marks the words of all of them.
    """
    if not any(query.has_text for query in queries):
        return []
    any_query = Q()
    flags: dict[str, Expression] = {}
    combined: SearchQuery | None = None
    for i, query in enumerate(queries):
        if not query.has_text:  # filters alone would bring every paper of a category
            flags[f"matched_{i}"] = Value(False)
            continue
        any_query |= condition(query)
        flags[f"matched_{i}"] = ExpressionWrapper(condition(query), output_field=BooleanField())
        for text, _weight in query.text_parts():
            combined = tsquery(text) if combined is None else combined | tsquery(text)
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
        .annotate(**flags, announced=Subquery(first))
        .order_by("-announced", "arxiv_id")
    )
    assert combined is not None  # some query has text
    papers = list(annotate_headlines(papers, combined)[:limit])
    for paper in papers:
        paper.matched_queries = [i for i in range(len(queries)) if getattr(paper, f"matched_{i}")]
    mark(papers)
    label_categories(papers)
    return papers


# --------------------------------------------------------------------------------------------
# Marks
# --------------------------------------------------------------------------------------------


def marked_words(*headlines: str | None) -> set[str]:
    """The words PostgreSQL marked in the headlines, as they are written in the text."""
    words: set[str] = set()
    for headline in headlines:
        if headline:
            words.update(re.findall(f"{_START}(.*?){_STOP}", headline, re.S))
    return {word for word in words if word.strip()}


def headline_text(headline: str | None, *, marker: str = "*") -> str:
    """A headline as plain text (an email), the matches between markers: *gossip*."""
    return (headline or "").replace(_START, marker).replace(_STOP, marker)


def headline_html(headline: str | None) -> SafeString:
    """A headline as HTML: the text escaped, the matches in <mark>."""
    escaped = escape(headline or "")
    return mark_safe(escaped.replace(_START, "<mark>").replace(_STOP, "</mark>"))  # noqa: S308


def _words_pattern(words: Iterable[str]) -> re.Pattern[str] | None:
    words = sorted({w for w in words if w}, key=len, reverse=True)
    if not words:
        return None
    alternatives = "|".join(re.escape(w) for w in words)
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)", re.IGNORECASE)


def mark_text(text: str, words: Iterable[str]) -> SafeString:
    """Plain text as HTML with each of the words in <mark>."""
    pattern = _words_pattern(words)
    return escape(text) if pattern is None else _marked(text, pattern)


def _marked(text: str, pattern: re.Pattern[str]) -> SafeString:
    parts, position = [], 0
    for match in pattern.finditer(text):
        parts += [escape(text[position : match.start()]), f"<mark>{escape(match[0])}</mark>"]
        position = match.end()
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts))  # noqa: S308 - every piece of text is escaped


_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Never marked inside: formulas and code (whose text is not words). Inside a link is fine: the
# abstract's market terms are links, and a search for one marks it.
_OPAQUE = {"math", "code"}


def mark_html(markup: str, words: Iterable[str]) -> SafeString:
    """Stored, sanitised HTML with each of the words in <mark>, outside formulas and links."""
    return _marked_html(markup, _words_pattern(words))


def _marked_html(markup: str, pattern: re.Pattern[str] | None) -> SafeString:
    if pattern is None or not markup:
        return mark_safe(markup)  # noqa: S308 - the input is the stored, sanitised HTML
    out: list[str] = []
    opaque = 0
    for token in _TOKEN.findall(markup):
        if token.startswith("<"):
            tag = _TAG.match(token)
            if tag and tag.group(2).lower() in _OPAQUE and not token.endswith("/>"):
                opaque += -1 if tag.group(1) else 1
            out.append(token)
        elif opaque > 0:
            out.append(token)
        else:
            out.append(_marked(html.unescape(token), pattern))
    return mark_safe("".join(out))  # noqa: S308 - tags as stored, text escaped by mark_text


@dataclass
class Marks:
    """What a result shows marked: its title, short authors, abstract and a snippet."""

    title: SafeString
    authors: SafeString
    snippet: SafeString | None = None
    words: set[str] = field(default_factory=set)


def marks_for(paper: Paper) -> Marks:
    """Marks from the headlines ``ranked()`` annotated on the paper."""
    title_headline = getattr(paper, "title_headline", None)
    authors_headline = getattr(paper, "authors_headline", None)
    abstract_headline = getattr(paper, "abstract_headline", None)
    words = marked_words(title_headline, authors_headline, abstract_headline)
    snippet = headline_html(abstract_headline) if _START in (abstract_headline or "") else None
    return Marks(
        title=mark_html(paper.title_html or escape(paper.title), words),
        authors=mark_text(paper.short_authors, words),
        snippet=snippet,
        words=words,
    )


# Marks without ts_headline: PostgreSQL gives the query's lexemes (its own parse of what was
# typed: stems, negations, stop words dropped), and the page's few texts are matched here with
# the same Snowball stemmer. ts_headline parsed and stemmed each result's whole abstract again
# on the server, a large share of a page's time.

_WORD = re.compile(r"\w+")
# A lexeme of the text form of a tsquery ('...', a quote inside doubled, weights after a colon),
# a negation, a parenthesis.
_TSQUERY_PART = re.compile(r"'((?:[^']|'')*)'(?::[*A-D]+)?|!|\(|\)")
_ANNOTATION = re.compile(r"<annotation[^>]*>[^<]*</annotation>", re.IGNORECASE)
_INLINE_TAG = re.compile(r"</?(?:a|abbr|b|em|i|s|small|span|strong|sub|sup|u)(?:\s[^>]*)?>", re.I)
_ANY_TAG = re.compile(r"<[^>]*>")
_stemmers = threading.local()
SNIPPET_WORDS = 30
SNIPPET_FRAGMENTS = 2


@functools.lru_cache(maxsize=100_000)
def lexeme(word: str) -> str:
    """The lexeme the search configuration makes of one word: accents folded, then the
    English Snowball stem ("Federated" and "federation" give "feder")."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:  # a Stemmer is not safe to share between threads
        stemmer = _stemmers.english = Stemmer("english")
    return stemmer.stemWord(_fold(word))


def query_lexemes(text: str | None) -> frozenset[str]:
    """The lexemes of a tsquery's text form that a match contains: all but the negated ones
    (``'gossip' & !( 'block' <-> 'chain' )`` gives {"gossip"})."""
    found: set[str] = set()
    negated, pending = [False], False
    for part in _TSQUERY_PART.finditer(text or ""):
        token = part.group(0)
        if token == "!":
            pending = True
        elif token == "(":
            negated.append(negated[-1] or pending)
            pending = False
        elif token == ")":
            if len(negated) > 1:
                negated.pop()
        else:
            if not (negated[-1] or pending):
                found.add(part.group(1).replace("''", "'"))
            pending = False
    return frozenset(found)


def html_text(markup: str) -> str:
    """Readable words of stored HTML, as ``paper_search_text`` reads them for the index."""
    text = _ANY_TAG.sub(" ", _INLINE_TAG.sub("", _ANNOTATION.sub(" ", markup or "")))
    return " ".join(html.unescape(text).split())


def _candidates(lexemes: frozenset[str]) -> re.Pattern[str]:
    """The words that may stem to one of the lexemes, for a first cut before stemming: a
    Snowball stem is the word's beginning, bar its last letter ("studi" from "study").
    Lowercase, for a lowercased text: a case-blind pattern scans several times slower."""
    beginnings = sorted({lex[:-1] if len(lex) > 2 else lex for lex in lexemes}, key=len)
    alternatives = "|".join(re.escape(beginning) for beginning in reversed(beginnings))
    return re.compile(rf"\b(?:{alternatives})\w*")


def _found(
    text: str, lexemes: frozenset[str], candidates: re.Pattern[str] | None
) -> tuple[set[str], list[int]]:
    """The words of the text, as written, that the query's lexemes match, and the offsets
    where they occur. ``candidates`` (from _candidates) spares stemming most words of an
    unaccented text (whose lowercase keeps every offset)."""
    words: set[str] = set()
    offsets: list[int] = []
    if not lexemes or not text:
        return words, offsets
    if candidates is not None and text.isascii():
        matches = candidates.finditer(text.lower())
    else:  # an accented word may fold to a candidate ("Schrödinger")
        matches = _WORD.finditer(text)
    for match in matches:
        word = text[match.start() : match.end()]
        if lexeme(word) in lexemes:
            words.add(word)
            offsets.append(match.start())
    return words, offsets


def matching_words(
    text: str, lexemes: frozenset[str], candidates: re.Pattern[str] | None = None
) -> set[str]:
    """The words of the text, as written, that the query's lexemes match."""
    return _found(text, lexemes, candidates)[0]


def snippet(text: str, words: set[str]) -> SafeString | None:
    """Up to SNIPPET_FRAGMENTS passages of SNIPPET_WORDS words of the text, those with the
    most matched words, in text order, joined by " … ", the words in <mark>; None without
    any match (as ts_headline's fragments)."""
    text = " ".join(text.split())
    pattern = _words_pattern(words)
    offsets = [match.start() for match in pattern.finditer(text)] if pattern else []
    return _snippet(text, pattern, offsets)


def _snippet(text: str, pattern: re.Pattern[str] | None, offsets: list[int]) -> SafeString | None:
    """snippet() of a text whose words are one space apart, from the offsets of its matches
    and the pattern that marks them."""
    if pattern is None or not offsets:
        return None
    # The index of the word each match is in.
    hits = sorted({text.count(" ", 0, offset) for offset in offsets})
    tokens = text.split(" ")
    count = len(tokens)
    chosen: list[tuple[int, int]] = []
    for _ in range(SNIPPET_FRAGMENTS):
        best = None
        for hit in hits:
            # A few words of context before the first match.
            start = max(0, min(hit - SNIPPET_WORDS // 6, count - SNIPPET_WORDS))
            end = min(count, start + SNIPPET_WORDS)
            if any(start < other_end and other_start < end for other_start, other_end in chosen):
                continue
            score = bisect.bisect_left(hits, end) - bisect.bisect_left(hits, start)
            if best is None or score > best[0]:
                best = (score, start, end)
        if best is None:
            break
        chosen.append(best[1:])
    return mark_safe(  # noqa: S308 - _marked escapes every piece of text
        " … ".join(_marked(" ".join(tokens[start:end]), pattern) for start, end in sorted(chosen))
    )


def matches_for(
    paper: Paper, lexemes: frozenset[str], candidates: re.Pattern[str] | None = None
) -> Marks:
    """Marks of a result from the query's lexemes (see query_lexemes)."""
    title = html_text(paper.title_html) if paper.title_html else paper.title
    # One space apart, as _snippet reads it.
    abstract = html_text(paper.abstract_html) if paper.abstract_html else paper.abstract
    abstract = " ".join(abstract.split())
    in_abstract, offsets = _found(abstract, lexemes, candidates)
    words = matching_words(title, lexemes, candidates)
    words |= matching_words(paper.authors_text, lexemes, candidates) | in_abstract
    pattern = _words_pattern(words)  # one pattern for the paper's three texts
    return Marks(
        title=_marked_html(paper.title_html or escape(paper.title), pattern),
        authors=_marked(paper.short_authors, pattern) if pattern else escape(paper.short_authors),
        snippet=_snippet(abstract, pattern, offsets),
        words=words,
    )


def mark_matches(papers: Iterable[Paper]) -> None:
    """As mark(), for papers from ranked(): marks from the query PostgreSQL parsed
    (``search_query``), computed here for the page's papers only."""
    parsed: dict[str | None, tuple[frozenset[str], re.Pattern[str] | None]] = {}
    for paper in papers:
        text = getattr(paper, "search_query", None)
        if text not in parsed:  # the same query on every paper of a page
            lexemes = query_lexemes(text)
            parsed[text] = (lexemes, _candidates(lexemes) if lexemes else None)
        marks = matches_for(paper, *parsed[text])
        paper.search_title = marks.title
        paper.search_authors = marks.authors
        paper.search_snippet = marks.snippet
        paper.search_words = sorted(marks.words)


def label_categories(papers: Iterable[Paper]) -> None:
    """Set ``search_category`` on each paper, its label in a list of results as in the
    listings: the primary category's code and name (one query)."""
    papers = list(papers)
    codes = {paper.primary_category for paper in papers}
    names = dict(Category.objects.filter(code__in=codes).values_list("code", "name"))
    for paper in papers:
        code = paper.primary_category
        paper.search_category = SimpleNamespace(code=code, name=names.get(code, code))


# Letters Unicode does not decompose into a base letter and an accent, folded as PostgreSQL's
# unaccent folds them.
_UNDECOMPOSED = str.maketrans(
    {"ı": "i", "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ß": "ss", "æ": "ae", "œ": "oe", "þ": "th"}
)


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.lower().translate(_UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def mark_similar(papers: Iterable[Paper], text: str) -> None:
    """Mark, in the fallback's results, the words of names and titles that resemble the
    query's words ("Lamport" for "Lamprt"): PostgreSQL marks only exact matches."""
    wanted = [_fold(word) for word in re.findall(r"\w+", text) if len(word) > 2]
    for paper in papers:
        words = {
            word
            for word in re.findall(r"\w+", f"{paper.short_authors} {paper.title_text}")
            if any(
                difflib.SequenceMatcher(None, _fold(word), target).ratio() >= 0.75
                for target in wanted
            )
        }
        paper.search_title = mark_html(paper.title_html or escape(paper.title), words)
        paper.search_authors = mark_text(paper.short_authors, words)


def mark(papers: Iterable[Paper]) -> None:
    """Set ``search_title``, ``search_authors``, ``search_snippet`` and ``search_words`` (for
    the abstract, marked in the template after its market terms) on each paper, for
    templates/includes/paper_item.html."""
    for paper in papers:
        marks = marks_for(paper)
        paper.search_title = marks.title
        paper.search_authors = marks.authors
        paper.search_snippet = marks.snippet
        paper.search_words = sorted(marks.words)


# --------------------------------------------------------------------------------------------
# A page of results
# --------------------------------------------------------------------------------------------


def count_capped(papers: QuerySet[Paper]) -> int:
    """How many papers, counting no further than MAX_COUNTED + 1: a lean query (no ranking,
    no headlines) that stops early on a common word."""
    return papers.order_by()[: MAX_COUNTED + 1].count()


class _CappedPaginator(Paginator):
    """Pages over at most MAX_COUNTED results, from a count made beforehand."""

    def __init__(self, object_list, per_page, *, found: int) -> None:
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


def results(query: Query, *, page: str | int | None = 1) -> Results:
    """One page of results, with a constant number of queries: the matches' ids (at most
    MAX_COUNTED + 1 of them, which is the count), at most one more count and a check of the
    words when nothing matched, then the page itself."""
    ids = list(matching(query).order_by().values_list("pk", flat=True)[: MAX_COUNTED + 1])
    found = len(ids)
    if found or not query.has_text:
        papers = ranked(query, recent=True) if found > MAX_COUNTED else ranked(query, among=ids)
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
        narrowed, oldest = _recent(query)
        papers = similar_papers(narrowed, words)
        if oldest:
            papers = papers.filter(arxiv_id__gte=oldest)
    current = _CappedPaginator(papers, RESULTS_PER_PAGE, found=found).get_page(page)
    current.object_list = list(current.object_list)
    mark_similar(current.object_list, query.fallback_text())
    return Results(page=current, found=found, similar=True)
