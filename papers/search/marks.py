"""Marking what matched in a result, in Python, for the few papers shown: the matched words of
its title, authors and abstract in <mark>, and a snippet of where a long abstract matched.

The one way words get marked, on /search/, in saved searches and digests, and in the
misspelling fallback: PostgreSQL gives the query's lexemes (its own parse of what was typed:
stems, negations, stop words dropped), or the fallback gives the similar words it found, and
each text's words are stemmed here with the same Snowball stemmer (papers.search.words). A word
is marked when its lexeme is one of them, in whatever form it is written ("Federation" for
``federated``). ``ts_headline`` parsed and stemmed each result's whole abstract again on the
server, a large share of a page's time.
"""

from __future__ import annotations

import bisect
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ..models import Paper
from .words import html_text, lexeme

SNIPPET_WORDS = 30
SNIPPET_FRAGMENTS = 2

_WORD = re.compile(r"\w+")
# A lexeme of the text form of a tsquery ('...', a quote inside doubled, weights after a colon),
# a negation, a parenthesis.
_TSQUERY_PART = re.compile(r"'((?:[^']|'')*)'(?::[*A-D]+)?|!|\(|\)")
_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Never marked inside: formulas and code (whose text is not words). Inside a link is fine: the
# abstract's market terms are links, and a search for one marks it.
_OPAQUE = {"math", "code"}


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


def word_lexemes(words: Iterable[str]) -> frozenset[str]:
    """The lexemes of words as written, e.g. the fallback's similar words ("lamport")."""
    return frozenset(lexeme(word) for word in words if word)


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
    """The words of the text, as written, that the lexemes match, and the offsets where they
    occur. ``candidates`` (from _candidates) spares stemming most words of an unaccented text
    (whose lowercase keeps every offset)."""
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


@dataclass
class Marks:
    """What a result shows marked: its title, short authors, abstract and a snippet."""

    title: SafeString
    authors: SafeString
    snippet: SafeString | None = None
    words: set[str] = field(default_factory=set)


def matches_for(
    paper: Paper, lexemes: frozenset[str], candidates: re.Pattern[str] | None = None
) -> Marks:
    """Marks of a result from lexemes (see query_lexemes and word_lexemes)."""
    title = html_text(paper.title_html) if paper.title_html else paper.title
    # One space apart, as _snippet reads it.
    abstract = html_text(paper.abstract_html) if paper.abstract_html else paper.abstract
    abstract = " ".join(abstract.split())
    in_abstract, offsets = _found(abstract, lexemes, candidates)
    words = _found(title, lexemes, candidates)[0]
    words |= _found(paper.authors_text, lexemes, candidates)[0] | in_abstract
    pattern = _words_pattern(words)  # one pattern for the paper's three texts
    return Marks(
        title=_marked_html(paper.title_html or escape(paper.title), pattern),
        authors=_marked(paper.short_authors, pattern) if pattern else escape(paper.short_authors),
        snippet=_snippet(abstract, pattern, offsets),
        words=words,
    )


def mark_matches(papers: Iterable[Paper], *, lexemes: frozenset[str] | None = None) -> None:
    """Set ``search_title``, ``search_authors``, ``search_snippet`` and ``search_words`` (for
    the abstract, marked in the template after its market terms) on each paper, for
    templates/includes/paper_item.html.

    The words marked are those of ``lexemes`` when given (the fallback's similar words), else
    of the query PostgreSQL parsed for each paper (``search_query``, annotated by ranked()
    and new_matches())."""
    parsed: dict[str | None, tuple[frozenset[str], re.Pattern[str] | None]] = {}
    for paper in papers:
        text = None if lexemes is not None else getattr(paper, "search_query", None)
        if text not in parsed:  # the same query on every paper of a page
            wanted = lexemes if lexemes is not None else query_lexemes(text)
            parsed[text] = (wanted, _candidates(wanted) if wanted else None)
        marks = matches_for(paper, *parsed[text])
        paper.search_title = marks.title
        paper.search_authors = marks.authors
        paper.search_snippet = marks.snippet
        paper.search_words = sorted(marks.words)


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


def mark_plain(text: str, words: Iterable[str], *, marker: str = "*") -> str:
    """Plain text with each of the words between markers, for an e-mail: *gossip*."""
    pattern = _words_pattern(words)
    return text if pattern is None else pattern.sub(lambda m: f"{marker}{m[0]}{marker}", text)


def _marked(text: str, pattern: re.Pattern[str]) -> SafeString:
    parts, position = [], 0
    for match in pattern.finditer(text):
        parts += [escape(text[position : match.start()]), f"<mark>{escape(match[0])}</mark>"]
        position = match.end()
    parts.append(escape(text[position:]))
    return mark_safe("".join(parts))  # noqa: S308 - every piece of text is escaped


def mark_html(markup: str, words: Iterable[str]) -> SafeString:
    """Stored, sanitised HTML with each of the words in <mark>, outside formulas and code."""
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
    return mark_safe("".join(out))  # noqa: S308 - tags as stored, text escaped by _marked


def _snippet(text: str, pattern: re.Pattern[str] | None, offsets: list[int]) -> SafeString | None:
    """Up to SNIPPET_FRAGMENTS passages of SNIPPET_WORDS words of the text (its words one
    space apart), those with the most matches (at ``offsets``), in text order, the words of
    ``pattern`` in <mark>; None without any match. A "…" stands wherever text is left out:
    before, between and after the passages, so that a cut never reads as the abstract's end."""
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
    parts: list[str] = []
    shown = 0  # the end of the last passage
    for start, end in sorted(chosen):
        if start > shown:
            parts.append("…")
        parts.append(_marked(" ".join(tokens[start:end]), pattern))
        shown = end
    if shown < count:
        parts.append("…")
    return mark_safe(" ".join(parts))  # noqa: S308 - _marked escapes every piece of text
