"""The rulebook of what counts as a mention: each rule with examples of text that counts and
text that does not, as data.

The rules page (``/market/rules/``, section "How mentions are counted") renders these, and
tests/market/test_rulebook.py runs every example through the one matcher
(``market.highlighting.Matcher``, the one dividends and highlighting use), so the page and the
code cannot disagree. The words marked on the page are the matcher's own matches.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from .highlighting import Matcher


@dataclass(frozen=True, slots=True)
class Example:
    text: str  # the abstract (or the whole text), as arXiv gives it: TeX source
    counts: bool
    title: str | None = None  # given: a paper, its title and ``text`` as its abstract
    term: str | None = None  # the term it is about, when not the rule's own
    note: str = ""  # why, in a few words


@dataclass(frozen=True, slots=True)
class Rule:
    slug: str  # the section's anchor on the page
    heading: str
    text: str
    term: str
    examples: tuple[Example, ...]
    aliases: tuple[str, ...] = ()
    others: tuple[str, ...] = ()  # other terms listed beside it (the longest match decides)


RULES: tuple[Rule, ...] = (
    Rule(
        slug="case",
        heading="Case does not matter",
        text="Capitals and small letters are the same.",
        term="KV cache",
        examples=(
            Example("We page the KV Cache.", True),
            Example("a kv cache", True),
            Example("THE KV CACHE", True),
        ),
    ),
    Rule(
        slug="whole-words",
        heading="Whole words only",
        text="The term's words must stand as words: letters, digits or an underscore touching "
        "them on either side make a different word.",
        term="cache",
        examples=(
            Example("a shared cache of results", True),
            Example("results (cached or not)", False, note="another word"),
            Example("we precache pages", False, note="another word"),
            Example("set cache_size to 4", False, note="an identifier: the underscore joins"),
        ),
    ),
    Rule(
        slug="plurals",
        heading="Plurals count",
        text="The last word may take “s” or “es”; a last word ending in a consonant and “y” "
        "may end in “ies” instead. Irregular plurals do not count unless listed as aliases.",
        term="index",
        examples=(
            Example("two indexes", True),
            Example("per-query policies", True, term="policy"),
            Example("shared caches", True, term="cache"),
            Example("two indices", False, note="an irregular plural"),
        ),
    ),
    Rule(
        slug="possessives",
        heading="Possessives count",
        text="An apostrophe ends the word, so “’s” and a plural’s “’” leave the term whole.",
        term="cache",
        examples=(
            Example("the cache's size", True),
            Example("the caches' sizes", True),
            Example("the cache’s hit rate", True),
        ),
    ),
    Rule(
        slug="hyphenated",
        heading="Hyphenated compounds count",
        text="A hyphen separates words, so the term counts inside a hyphenated compound.",
        term="cache",
        examples=(
            Example("cache-aware scheduling", True),
            Example("a write-cache", True),
            Example("a KV-cache", True),
        ),
    ),
    Rule(
        slug="closed",
        heading="Closed compounds do not count",
        text="Written as one word, a compound is another word.",
        term="cache",
        examples=(
            Example("a cache line", True),
            Example("a cache-line", True),
            Example("a cacheline", False, note="one word"),
            Example("two writecaches", False, note="one word"),
        ),
    ),
    Rule(
        slug="inflections",
        heading="Other forms of a word do not count",
        text="Only the plural endings are added: no past tense, no “-ing”, no “-able”. A verb "
        "whose form is spelled like the plural does count: the matcher cannot tell them apart.",
        term="cache",
        examples=(
            Example("the pages are cached", False, note="past tense"),
            Example("caching helps", False, note="“-ing”"),
            Example("cacheable responses", False, note="another word"),
            Example("the proxy caches responses", True, note="spelled as the plural"),
        ),
    ),
    Rule(
        slug="spacing",
        heading="Hyphens and spaces are interchangeable",
        text="Between the words of a phrase, spaces, hyphens, TeX’s “~” and line breaks are the "
        "same; other marks between them are not.",
        term="key-value store",
        examples=(
            Example("a key value store", True),
            Example("a key-value-store", True),
            Example("a key~value store", True),
            Example("a key-\nvalue store", True, note="a line broken after the hyphen"),
            Example("a key/value store", False, note="a slash"),
            Example("a keyvalue store", False, note="one word"),
        ),
    ),
    Rule(
        slug="aliases",
        heading="Aliases count like the phrase",
        text="A term may list other spellings; each counts exactly as the phrase does, with "
        "every rule above. A part of a phrase does not count alone.",
        term="KV cache",
        aliases=("key-value cache",),
        examples=(
            Example("key-value caches", True),
            Example("a key value cache", True),
            Example("the KV store", False, note="a part of the phrase"),
        ),
    ),
    Rule(
        slug="longest",
        heading="The longest match wins",
        text="Where two listed terms overlap, only the longer counts; of two equally long, the "
        "earlier.",
        term="cache",
        others=("KV cache",),
        examples=(
            Example("a cache and a KV store", True),
            Example("a KV cache", False, note="“KV cache” counts instead"),
            Example("a KV cache", True, term="KV cache"),
        ),
    ),
    Rule(
        slug="formulas",
        heading="Words inside formulas count",
        text="Formulas are read as arXiv gives them, in TeX: a word written inside one counts "
        "like any other word; a TeX command is one word with its backslash.",
        term="cache",
        examples=(
            Example(r"a hit rate $h_{\mathrm{cache}} > 0.9$", True),
            Example(r"$T_{\text{cache}}$ dominates", True),
            Example(r"with \cachesize set", False, note="a command: one word"),
        ),
    ),
    Rule(
        slug="title-abstract",
        heading="Title and abstract, each alone",
        text="A paper counts when its title or its abstract mentions the term; a phrase cannot "
        "begin in the title and end in the abstract.",
        term="serverless computing",
        examples=(
            Example(
                "We measure cold starts.",
                True,
                title="Serverless computing at scale",
                note="in the title",
            ),
            Example(
                "Computing costs fall.",
                False,
                title="Why serverless",
                note="split between title and abstract",
            ),
        ),
    ),
)


def cite(slug: str) -> str:
    """A rule as the rules page numbers and names it: "rule 8, “Hyphens and spaces are
    interchangeable”" (for the "why this counted" explanations)."""
    for number, rule in enumerate(RULES, start=1):
        if rule.slug == slug:
            return f"rule {number}, “{rule.heading}”"
    raise KeyError(slug)


@dataclass(frozen=True, slots=True)
class Piece:
    text: str
    marked: bool


@dataclass(frozen=True, slots=True)
class Shown:
    """An example as the page shows it: its text in pieces, the matched words marked."""

    example: Example
    term: str
    title: list[Piece] = field(default_factory=list)
    text: list[Piece] = field(default_factory=list)


def matcher_for(rule: Rule) -> tuple[Matcher, dict[str, int]]:
    """The one matcher over the rule's terms (its own, its examples', the others listed beside
    it), and each term's id."""
    phrases = [rule.term, *rule.others]
    phrases += [e.term for e in rule.examples if e.term and e.term not in phrases]
    ids = {phrase: number for number, phrase in enumerate(phrases, start=1)}
    rows = [
        {
            "id": ids[phrase],
            "slug": f"rule-{ids[phrase]}",
            "phrase": phrase,
            "aliases": list(rule.aliases) if phrase == rule.term else [],
        }
        for phrase in phrases
    ]
    return Matcher.from_terms(rows), ids


def counts(rule: Rule, example: Example) -> bool:
    """Whether the matcher counts ``example`` for its term, as dividends count a paper."""
    matcher, ids = matcher_for(rule)
    term_id = ids[example.term or rule.term]
    if example.title is None:
        return term_id in matcher.mentioned_terms(example.text)
    return term_id in matcher.paper_mentions(title=example.title, abstract=example.text)


def _pieces(matcher: Matcher, text: str, term_id: int) -> list[Piece]:
    pieces: list[Piece] = []
    at = 0
    for match in matcher.find_mentions(text):
        if match.term.id != term_id:
            continue
        if match.start > at:
            pieces.append(Piece(text[at : match.start], False))
        pieces.append(Piece(text[match.start : match.end], True))
        at = match.end
    if at < len(text):
        pieces.append(Piece(text[at:], False))
    return pieces


@dataclass(frozen=True, slots=True)
class ShownRule:
    rule: Rule
    counting: list[Shown]
    not_counting: list[Shown]


@functools.cache
def shown() -> list[ShownRule]:
    """Every rule with its examples marked by the matcher: the same for every request, so made
    once a process (it reads no database: the terms are the rulebook's own)."""
    out = []
    for rule in RULES:
        matcher, ids = matcher_for(rule)
        examples = []
        for example in rule.examples:
            term = example.term or rule.term
            examples.append(
                Shown(
                    example=example,
                    term=term,
                    title=_pieces(matcher, example.title, ids[term]) if example.title else [],
                    text=_pieces(matcher, example.text, ids[term]),
                )
            )
        out.append(
            ShownRule(
                rule=rule,
                counting=[e for e in examples if e.example.counts],
                not_counting=[e for e in examples if not e.example.counts],
            )
        )
    return out
