"""The words of a text as the search configuration (``english_unaccent``, papers.fulltext)
reads them, in Python: accents folded as ``unaccent`` folds them, the English Snowball stem
PostgreSQL's ``english`` dictionary uses (PyStemmer), and the readable text of stored HTML.
Marking a page's matches here spares the database a ``ts_headline`` over every abstract."""

from __future__ import annotations

import functools
import html
import re
import threading
import unicodedata

from Stemmer import Stemmer

_ANNOTATION = re.compile(r"<annotation[^>]*>[^<]*</annotation>", re.IGNORECASE)
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
    """Readable words of stored HTML, as ``paper_search_text`` reads them for the index."""
    text = _ANY_TAG.sub(" ", _INLINE_TAG.sub("", _ANNOTATION.sub(" ", markup or "")))
    return " ".join(html.unescape(text).split())
