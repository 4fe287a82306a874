"""The words of a text as the search configuration (``english_unaccent``, papers.fulltext)
reads them, in Python: accents folded as ``unaccent`` folds them, the English Snowball stem
PostgreSQL's ``english`` dictionary uses (PyStemmer), and the readable text of stored HTML
(formulas as the plain-text rendering writes them).
Marking a page's matches here spares the database a ``ts_headline`` over every abstract."""

from __future__ import annotations

import functools
import html
import re
import threading
import unicodedata

from Stemmer import Stemmer

from ..typesetting.mathtext import math_text

_MATH = re.compile(r"<math\b[^>]*>.*?</math>", re.IGNORECASE | re.DOTALL)
# The TeX a formula was typeset from, which the typesetter keeps in its alttext (typesetter
# versions before 6 kept it in an annotation, as comments written then still do).
_TEX = re.compile(
    r'^<math\b[^>]*\balttext="([^"]*)"'
    r'|<annotation encoding="application/x-tex">([^<]*)</annotation>'
)
_ANNOTATION = re.compile(r"<annotation[^>]*>[^<]*</annotation>", re.IGNORECASE)
_MSPACE = re.compile(r"<mspace\b[^>]*>", re.IGNORECASE)
_INLINE_TAG = re.compile(r"</?(?:a|abbr|b|em|i|s|small|span|strong|sub|sup|u)(?:\s[^>]*)?>", re.I)
_ANY_TAG = re.compile(r"<[^>]*>")
_stemmers = threading.local()

# Letters Unicode does not decompose into a base letter and an accent, folded as PostgreSQL's
# unaccent folds them.
_UNDECOMPOSED = str.maketrans(
    {"ı": "i", "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ß": "ss", "æ": "ae", "œ": "oe", "þ": "th"}
)


def fold(word: str) -> str:
    """The word lowercased with its accents folded ("Dağlı" → "dagli")."""
    decomposed = unicodedata.normalize("NFKD", word.lower().translate(_UNDECOMPOSED))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@functools.lru_cache(maxsize=100_000)
def lexeme(word: str) -> str:
    """The lexeme the search configuration makes of one word: accents folded, then the
    English Snowball stem ("Federated" and "federation" give "feder")."""
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:  # a Stemmer is not safe to share between threads
        stemmer = _stemmers.english = Stemmer("english")
    return stemmer.stemWord(fold(word))


def html_text(markup: str) -> str:
    """Readable text of stored HTML, what a result's marks and snippet are read from: the
    words ``paper_search_text`` indexes, inline markup joined to its text, other tags
    between words, and each formula as the plain-text rendering writes it ("O(1)", "n = 10⁶",
    see papers.typesetting.mathtext), not as its MathML tokens one space apart ("O ( 1 )")."""
    markup = markup or ""
    parts: list[str] = []
    position = 0
    for formula in _MATH.finditer(markup):
        parts += [_markup_text(markup[position : formula.start()]), _formula_text(formula[0])]
        position = formula.end()
    parts.append(_markup_text(markup[position:]))
    return " ".join("".join(parts).split())


def _markup_text(markup: str) -> str:
    return html.unescape(_ANY_TAG.sub(" ", _INLINE_TAG.sub("", markup)))


def _formula_text(markup: str) -> str:
    tex = _TEX.search(markup)
    if tex is not None:
        return math_text(html.unescape(tex[1] if tex[1] is not None else tex[2]))
    # MathML without its source (written by hand, or by an older typesetter): the symbols
    # run together as they are drawn, with the spaces the formula draws.
    text = _ANY_TAG.sub("", _MSPACE.sub(" ", _ANNOTATION.sub("", markup)))
    return html.unescape(text)
