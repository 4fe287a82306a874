"""What a reader typed, parsed into a Query: free words for ``websearch_to_tsquery``, the
``au:``/``ti:``/``abs:``/``cat:`` parts, the form's filters. No database here: a Query is a
value that papers.search.query turns into SQL."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from ..identifiers import ARXIV_ID, validate_category_code

MAX_QUERY_LENGTH = 300
MAX_PREFIXES = 10
# Words shorter than this have too few trigrams to tell names apart.
MIN_SIMILAR_WORD = 4

_PREFIX = re.compile(r'(?<!\S)(au|ti|abs|cat):("[^"]*"?|\S*)', re.IGNORECASE)
_ARXIV_ID = re.compile(
    rf"""\s*(?:
        (?:arxiv:\s*)?(?P<bare>{ARXIV_ID})(?:v\d+)?
      | (?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html)/
        (?P<url>{ARXIV_ID})(?:v\d+)?(?:\.pdf)?/?(?:[?#]\S*)?
    )\s*""",
    re.IGNORECASE | re.VERBOSE,
)
# A quoted phrase of the websearch syntax, with the "-" that excludes it; an unclosed quote runs
# to the end, as websearch_to_tsquery reads it.
_PHRASE = re.compile(r'(?:(?<!\S)(-))?"([^"]*)(?:"|$)')
# Characters no search needs and PostgreSQL cannot take (NUL) or that only hide text.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# A run of "-" where websearch_to_tsquery expects a word: at the start, or after a space, a
# quote or one of the characters it skips there (! & | ( ) <), with more of those and of "-"
# in between. Each "-" of it is a NOT, and PostgreSQL keeps every NOT of a run on a stack of
# 32 until the word they apply to: 32 of them ("q=" and a line of hyphens) fail the whole query
# with "tsquery stack too small". A "-" inside a word (fault-tolerant) is part of the word.
_NEGATIONS = re.compile(r'(?:^|(?<=[\s!&|()<"]))-[-\s!&|()<]*')


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

    def exact_phrases(self) -> list[tuple[str, str | None]]:
        """The quoted phrases the reader asks for (not those excluded with ``-``), their words
        one space apart, each with the part it is restricted to ("a" the title, "c" the
        abstract, None either), for ranking the papers that have them word for word first.
        Names are left out: a byline writes "Lamport, Leslie" as often as "Leslie Lamport"."""
        phrases: list[tuple[str, str | None]] = []
        for text, weight in self.text_parts():
            if weight == "b":
                continue
            for match in _PHRASE.finditer(text):
                words = " ".join(match.group(2).split())
                if words and not match.group(1):
                    phrases.append((words, weight))
        return phrases

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


def bounded_negations(text: str) -> str:
    """The text with each run of NOTs (``_NEGATIONS``) down to what it means: one "-" when it
    has an odd number of them, none when even (NOT NOT x is x). The query reads as before,
    and no run is ever deeper than one."""

    def shortened(run: re.Match[str]) -> str:
        return " -" if run.group().count("-") % 2 else " "

    return _NEGATIONS.sub(shortened, text)


def arxiv_id_in(text: str) -> str | None:
    """The arXiv id when the whole text is one (``2611.01234v2``, ``arXiv:cs/0101001``, an
    arxiv.org abs/pdf/html address), else None."""
    match = _ARXIV_ID.fullmatch(text or "")
    if not match:
        return None
    return match.group("bare") or match.group("url")


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
        if prefix != "cat":
            value = bounded_negations(value).strip()
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
    words = " ".join(bounded_negations(_PREFIX.sub(" ", text)).split())
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
