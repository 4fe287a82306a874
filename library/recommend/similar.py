"""A paper's nearest papers: cosine similarity of tf-idf vectors, found once per paper.

Comparing one paper with 300,000 would mean keeping every paper's vector (hundreds of MB). The
full-text index narrows instead: the paper's heaviest words (by its tf-idf weights) are asked
of ``search_vector`` as one OR query, the best ``SIMILAR_CANDIDATES`` by rank are turned into
vectors and compared exactly. The list is stored (``SimilarList``, a few hundred bytes a
paper) and a page only reads it; the worker finds it for each new day's papers, and for an
older paper when its page is first asked for.
"""

from __future__ import annotations

import re

import numpy as np
from django.db import connection

from papers.fulltext import CONFIG

from ..models import SimilarList
from . import text

SIMILAR_SHOWN = 6
SIMILAR_CANDIDATES = 300
QUERY_WORDS = 12
_WORD = re.compile(r"^[a-z][a-z0-9]*$")


def find(*, paper_id: int) -> list[tuple[int, float]]:
    """The papers most like ``paper_id``, best first, with their cosine scores."""
    model = text.current()
    if model is None:
        return []
    vector = model.vectors([paper_id])
    if vector.nnz == 0:
        return []
    order = np.argsort(-vector.data)
    words: list[str] = []
    for i in order:
        for word in str(model.names[vector.indices[i]]).split():
            if _WORD.match(word) and word not in words:
                words.append(word)
        if len(words) >= QUERY_WORDS:
            break
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            SELECT id FROM papers_paper
            WHERE NOT hidden AND id <> %s AND search_vector @@ to_tsquery('{CONFIG}', %s)
            ORDER BY ts_rank(search_vector, to_tsquery('{CONFIG}', %s)) DESC
            LIMIT %s
            """,
            [paper_id, " | ".join(words), " | ".join(words), SIMILAR_CANDIDATES],
        )
        candidates = [pk for (pk,) in cursor.fetchall()]
    if not candidates:
        return []
    scores = (model.vectors(candidates) @ vector.T).toarray().ravel()
    best = np.argsort(-scores)[:SIMILAR_SHOWN]
    return [(candidates[i], round(float(scores[i]), 4)) for i in best if scores[i] > 0]


def store(*, paper_id: int) -> list[tuple[int, float]]:
    found = find(paper_id=paper_id)
    model = text.current(fit_if_missing=False)
    SimilarList.objects.update_or_create(
        paper_id=paper_id,
        defaults={"similar": [list(pair) for pair in found], "model": model.id if model else 0},
    )
    return found
