"""Finding the market's terms in text: the one matcher that both counts mentions for dividends
and (on the pages) decides which words are highlighted.

The rules it follows are published on the rules page, from the rulebook ``market/rulebook.py``
(section "How mentions are counted", each rule with examples the tests run through this
matcher): case-insensitive whole words, plurals, hyphens and spaces
alike, aliases, the longest match winning, once per paper and term, listed terms only. A
change to the matching here is a change to that page, and the other way round.

The work is linear in the text (n log n with the sort of candidates): every word is looked up
once in an index of the terms' first words, each candidate pattern is tried once where it may
start, and the choice among overlapping candidates is a sweep (see ``choose_longest``).

The compiled matcher is cached per process and rebuilt when the term set changes: the
database moves the term-set stamp (``kept_stamp('terms')``, market/sql/stamps.sql) whenever a
term is added, removed, renamed, given aliases or re-statused, however it was written.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from peerrevenue import keep

from .models import Term

# Between two words of a phrase: a run of spaces (TeX's ~ is a space too), or one hyphen with
# optional spaces after it (a line break after a hyphen in a wrapped abstract).
_HYPHENS = "\\-\u2010\u2011"
_SEPARATOR = rf"(?:[\s~]*[{_HYPHENS}][\s~]*|[\s~]+)"
_SPLIT_PHRASE = re.compile(rf"[\s~{_HYPHENS}]+")
_WORD = re.compile(r"\w+")
_CONSONANT_Y = re.compile(r"[^\W\daeiou_]y$", re.IGNORECASE)
_WORD_CACHE_SIZE = 100_000  # distinct words remembered per matcher (a few MB at most)


@dataclass(frozen=True, slots=True)
class TermRef:
    id: int
    slug: str
    phrase: str


@dataclass(frozen=True, slots=True)
class Match:
    start: int
    end: int
    term: TermRef

    def __len__(self) -> int:
        return self.end - self.start


def _phrase_pattern(phrase: str) -> tuple[str, str, int] | None:
    """(index key, pattern source, offset of the key's first character in the match).

    The source is compiled (case-insensitively) only when a text first contains the key: most
    terms are absent from most days' texts, and compiling hundreds of patterns up front would
    also churn the ``re`` module's cache.
    """
    words = [word for word in _SPLIT_PHRASE.split(phrase.strip()) if word]
    if not words or not _WORD.search(words[0]):
        return None
    parts = [re.escape(word) for word in words[:-1]]
    last = words[-1]
    if _CONSONANT_Y.search(last):
        parts.append(re.escape(last[:-1]) + "(?:y|ies)")
    elif last[-1].isalpha():
        parts.append(re.escape(last) + "(?:e?s)?")
    else:
        parts.append(re.escape(last))
    body = _SEPARATOR.join(parts)
    # Word boundaries only where the phrase itself starts/ends with a word character, so that
    # phrases such as "C++" still match.
    if re.match(r"\w", words[0]):
        body = r"(?<!\w)" + body
    if re.search(r"\w$", last):
        body += r"(?!\w)"
    first_word = _WORD.search(words[0])
    assert first_word is not None
    return first_word.group().lower(), body, first_word.start()


def _keys_for(word: str) -> Iterable[str]:
    """Index keys a text word may stand for: itself and its singulars."""
    yield word
    if word.endswith("s"):
        yield word[:-1]
        if word.endswith("es"):
            yield word[:-2]
        if word.endswith("ies"):
            yield word[:-3] + "y"


def choose_longest(
    candidates: Iterable[tuple[int, int, int]], *, length: int
) -> list[tuple[int, int, int]]:
    """Non-overlapping ``(start, end, term id)`` spans, longest first, then earliest, then the
    lowest term id; returned in text order. ``length`` bounds every ``end``.

    Linear after the sort (n log n in all): a candidate is checked against the chosen spans by
    its two end characters only. That suffices because every span chosen before it is at least
    as long, and a span at least as long that overlaps [start, end) must cover ``start`` or
    ``end - 1``. Each character is marked at most once, as chosen spans never overlap.
    """
    taken = bytearray(length)
    chosen = []
    for span in sorted(candidates, key=lambda c: (c[0] - c[1], c[0], c[2])):
        start, end, _ = span
        if end <= start or taken[start] or taken[end - 1]:
            continue
        taken[start:end] = b"\x01" * (end - start)
        chosen.append(span)
    chosen.sort()
    return chosen


class Matcher:
    """Finds listed terms in text. Build with :meth:`from_terms`; safe to share across threads."""

    def __init__(self, terms: Iterable[tuple[TermRef, Iterable[str]]]):
        self._by_key: dict[str, list[tuple[str, int, TermRef]]] = {}
        self.terms: dict[int, TermRef] = {}
        for ref, phrases in terms:
            self.terms[ref.id] = ref
            seen: set[str] = set()
            for phrase in phrases:
                found = _phrase_pattern(phrase)
                if found is None or found[1] in seen:
                    continue
                seen.add(found[1])
                key, source, offset = found
                self._by_key.setdefault(key, []).append((source, offset, ref))
        # Text word (as written) → the patterns that may start at it. Abstracts reuse a small
        # vocabulary, so this turns the per-word work (lowercasing, trying the singulars, up to
        # four index look-ups) into one dict look-up. Bounded; a plain dict is thread-safe
        # enough here (a lost entry is only recomputed).
        self._patterns_by_word: dict[str, tuple[tuple[re.Pattern[str], int, TermRef], ...]] = {}
        self._compiled: dict[str, re.Pattern[str]] = {}  # source → pattern, compiled on first use

    @classmethod
    def from_terms(cls, rows: Iterable[Mapping[str, Any]]) -> Matcher:
        """Rows with ``id``, ``slug``, ``phrase`` and ``aliases`` (as from ``.values()``)."""
        return cls(
            (
                TermRef(row["id"], row["slug"], row["phrase"]),
                [row["phrase"], *(a for a in row.get("aliases") or [] if isinstance(a, str))],
            )
            for row in rows
        )

    def _compile(self, source: str) -> re.Pattern[str]:
        pattern = self._compiled.get(source)
        if pattern is None:
            pattern = self._compiled[source] = re.compile(source, re.IGNORECASE)
        return pattern

    def _patterns_for(self, word: str) -> tuple[tuple[re.Pattern[str], int, TermRef], ...]:
        lowered = word.lower()
        found = tuple(
            (self._compile(source), offset, ref)
            for key in _keys_for(lowered)
            for source, offset, ref in self._by_key.get(key, ())
        )
        if len(self._patterns_by_word) >= _WORD_CACHE_SIZE:
            self._patterns_by_word.clear()
        self._patterns_by_word[word] = found
        return found

    def find_mentions(self, text: str) -> list[Match]:
        """Non-overlapping matches in text order; on overlaps the longest (then earliest) wins."""
        if not self._by_key or not text:
            return []
        # (start, end, term id) → term: the same match found from two words counts once.
        candidates: dict[tuple[int, int, int], TermRef] = {}
        cached = self._patterns_by_word
        for word in _WORD.finditer(text):
            patterns = cached.get(word.group())
            if patterns is None:
                patterns = self._patterns_for(word.group())
            if not patterns:
                continue
            word_start = word.start()
            for pattern, offset, ref in patterns:
                start = word_start - offset
                if start < 0:
                    continue
                found = pattern.match(text, start)
                if found:
                    candidates[found.start(), found.end(), ref.id] = ref
        return [
            Match(start, end, candidates[start, end, term_id])
            for start, end, term_id in choose_longest(candidates, length=len(text))
        ]

    def mentioned_terms(self, text: str) -> set[int]:
        return {match.term.id for match in self.find_mentions(text)}

    def paper_mentions(self, *, title: str, abstract: str) -> set[int]:
        """The terms a paper mentions, as dividends count them: its title and its abstract
        are matched each alone, so that a phrase cannot span the two."""
        return self.mentioned_terms(title) | self.mentioned_terms(abstract)


_compiled_lock = threading.Lock()
_compiled: tuple[str, Matcher] | None = None


def terms_version() -> str:
    """The term-set stamp: whatever is derived from the terms (the matcher, highlighted
    abstracts, the price table) is keyed by it. Callers rendering a page read it with the
    request's other facts (``keep.read``) and pass it on."""
    return str(keep.read(None, "terms")["terms"])


def current_matcher(version: str | None = None) -> Matcher:
    """The matcher over all listed terms, rebuilt only when the terms changed. ``version``, if
    given, is a ``terms_version()`` the caller has just read."""
    global _compiled
    if version is None:
        version = terms_version()
    compiled = _compiled
    if compiled is not None and compiled[0] == version:
        return compiled[1]
    with _compiled_lock:
        matcher = Matcher.from_terms(
            Term.objects.listed().values("id", "slug", "phrase", "aliases")
        )
        _compiled = (version, matcher)
    return matcher


def find_mentions(text: str) -> list[Match]:
    """Listed terms in ``text`` as ``Match(start, end, term)``; see the module doc for the rules."""
    return current_matcher().find_mentions(text)


def mentioned_terms(text: str) -> set[int]:
    """Ids of the listed terms that ``text`` mentions."""
    return current_matcher().mentioned_terms(text)
