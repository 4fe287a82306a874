"""The fallback when nothing matches: the words of names and titles most like the typed ones,
by trigrams, catch misspellings ("Lamprt" finds Lamport), and the papers that have them."""

from __future__ import annotations

import functools
import operator

from django.db.models import Case, F, Q, QuerySet, Value, When

from peerrevenue import replicas

from .. import fulltext
from ..models import NameWord, Paper
from .parse import Query
from .query import UNSHOWN, Matches, filtered, tsquery
from .words import fold

# Trigram similarity: "lamprt" and "lamport" 0.5, "ranal" and "raynal" 0.44, "lnch" and
# "lynch" 0.38.
SIMILARITY_THRESHOLD = 0.35
SIMILARITY_TIE = 0.05
# The fallback looks for papers with any of this many words like each typed word.
SIMILAR_WORDS = 5


def similar_words(text: str) -> dict[str, list[str]]:
    """For each word of the text (accent-folded, lowercase), the words of names and titles
    most like it ("lamprt": ["lamport"]); a word with none is left out.

    One query on the table of distinct words (papers.models.NameWord), whose trigram index
    finds the candidates (``%``: trigram similarity at least pg_trgm's default, 0.3). The
    closest one counts if it reaches SIMILARITY_THRESHOLD, and so do those as close as it
    (within SIMILARITY_TIE), at most SIMILAR_WORDS: a typo is usually nearest to the word
    meant, and a word of many papers' names would bring in papers of no interest."""
    needles = list(dict.fromkeys(fold(word) for word in text.split()))
    if not needles:
        return {}
    with replicas.reading_connection().cursor() as cursor:
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
        condition &= Q(Matches(F("search_vector"), functools.reduce(operator.or_, parts)))
        closeness += [
            When(Matches(F("search_vector"), part), then=Value(-i)) for i, part in enumerate(parts)
        ]
    return (
        filtered(Paper.objects.all(), query)
        .filter(condition)
        .defer(*UNSHOWN)
        .annotate(closeness=Case(*closeness, default=Value(-len(closeness))))
        .order_by(F("closeness").desc(), F("arxiv_id").desc())
    )
