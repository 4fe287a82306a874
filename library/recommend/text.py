"""The tf-idf model: fitted over the newest papers, stored, and loaded once per process.

arxiv-sanity-lite's vectorizer (word unigrams and bigrams, 20,000 features, words in at least
5 papers and at most a tenth of them, sublinear term frequency). It is fitted on the newest
``RECOMMEND_CORPUS_PAPERS`` visible papers, not all of them: the vocabulary and weights of
arXiv's language settle long before 300,000 papers, and the fit's time and memory stay bounded
(bench/recommend.py). The stored model is its vocabulary and idf weights, about 1 MB.
"""

from __future__ import annotations

import datetime as dt
import pickle
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max
from scipy.sparse import csr_matrix
from sklearn.feature_extraction.text import TfidfVectorizer

from papers.models import Listing, Paper

from ..models import TextModel

_TEX_COMMAND = re.compile(r"\\[A-Za-z]+|[${}^_\\]")


def paper_text(title: str, abstract: str, authors: str) -> str:
    """What the model reads of a paper: TeX commands dropped (``\\emph`` is no word)."""
    return _TEX_COMMAND.sub(" ", f"{title}\n{abstract}\n{authors}")


def vectorizer(*, papers: int) -> TfidfVectorizer:
    # arxiv-sanity's document-frequency bounds assume a large corpus: in a small one (a new
    # site, the tests) a topic's words are in more than a tenth of the papers and fewer than
    # five, so they are relaxed there.
    large = papers >= 1000
    return TfidfVectorizer(
        ngram_range=(1, 2),
        max_features=20000,
        min_df=5 if large else 1,
        max_df=0.1 if large else (0.9 if papers >= 10 else 1.0),
        sublinear_tf=True,
        stop_words="english",
        dtype=np.float32,
    )


def texts_of(paper_ids: Sequence[int]) -> list[str]:
    """The papers' texts, in the order of ``paper_ids`` (missing papers read as empty)."""
    rows = dict.fromkeys(paper_ids, "")
    for chunk_start in range(0, len(paper_ids), 5000):
        chunk = paper_ids[chunk_start : chunk_start + 5000]
        for pk, title, abstract, authors in Paper.objects.filter(pk__in=chunk).values_list(
            "pk", "title", "abstract", "authors_text"
        ):
            rows[pk] = paper_text(title, abstract, authors)
    return [rows[pk] for pk in paper_ids]


def newest_listing() -> dt.date | None:
    return Listing.objects.aggregate(newest=Max("date"))["newest"]


def fit(*, papers: int | None = None) -> TextModel:
    """Fit the vectorizer on the newest visible papers and store it (older models go)."""
    limit = papers or settings.RECOMMEND_CORPUS_PAPERS
    ids = list(Paper.objects.visible().order_by("-id").values_list("pk", flat=True)[:limit])
    texts = texts_of(ids)
    model = vectorizer(papers=len(texts))
    model.fit(texts)
    # The words dropped by min_df/max_df: only for inspection, and most of the pickle.
    model.stop_words_ = None
    blob = pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    with transaction.atomic():
        stored = TextModel.objects.create(
            papers=len(texts),
            features=len(model.vocabulary_),
            blob=blob,
            newest=newest_listing(),
        )
        TextModel.objects.exclude(pk=stored.pk).delete()
    return stored


@dataclass(frozen=True, slots=True)
class Loaded:
    id: int
    vectorizer: TfidfVectorizer
    names: Sequence[str]

    def vectors(self, paper_ids: Sequence[int]) -> csr_matrix:
        """Rows of unit length (the vectorizer's l2 norm), in the order of ``paper_ids``."""
        return self.vectorizer.transform(texts_of(paper_ids))

    def vectors_of_texts(self, texts: Iterable[str]) -> csr_matrix:
        return self.vectorizer.transform(list(texts))


_loaded: Loaded | None = None
_lock = threading.Lock()


def current(*, fit_if_missing: bool = True) -> Loaded | None:
    """The newest stored model, unpickled once per process (and again when a newer one is
    stored); fitted first when there is none and papers exist."""
    global _loaded
    while True:
        newest = TextModel.objects.order_by("-pk").values_list("pk", flat=True).first()
        if newest is None:
            if not fit_if_missing or not Paper.objects.visible().exists():
                return None
            newest = _fit_first().pk
        with _lock:
            if _loaded is not None and _loaded.id == newest:
                return _loaded
            blob = TextModel.objects.filter(pk=newest).values_list("blob", flat=True).first()
            if blob is None:  # replaced between the two reads: read the newest again
                continue
            model: TfidfVectorizer = pickle.loads(bytes(blob))  # noqa: S301 - our own pickle
            _loaded = Loaded(newest, model, model.get_feature_names_out())
            return _loaded


def forget() -> None:
    """Drop the model this process unpickled (tests store their own between cases)."""
    global _loaded
    with _lock:
        _loaded = None


def _fit_first() -> TextModel:
    """The first model, fitted once however many refits ask for it at the same moment: they
    queue on a transaction-level advisory lock (fine behind a transaction pooler), and those
    after the first find its model."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('library.text_model'))")
        found = TextModel.objects.order_by("-pk").first()
        return found if found is not None else fit()


def needs_fit() -> bool:
    """Whether a new day was ingested since the stored model was fitted (or there is none)."""
    stored = TextModel.objects.order_by("-pk").values_list("newest", flat=True).first()
    if not TextModel.objects.exists():
        return Paper.objects.visible().exists()
    newest = newest_listing()
    return newest is not None and (stored is None or newest > stored)
