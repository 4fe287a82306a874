"""Each reader's classifiers, fitted in the worker, and the scores they store.

arxiv-sanity-lite's per-tag ranking: a ``LinearSVC(class_weight="balanced", C=0.01)`` learns a
tag's papers (1) against the pool (0: the new papers and the background sample, see
``pool``), and ranks the new papers by its decision function. A reader with tags gets one
classifier per tag that has papers, and one for the whole library if some saved papers have no
tag; a new paper is credited to the classifier that likes it best. The top
``RECOMMEND_PER_READER`` are stored with the reason (which tag, how many papers it learned
from, the three words that weigh most in the score: the paper's tf-idf weight times the
classifier's weight), so a request reads rows and renders.

A refit happens when the inputs moved: the reader's library (``Shelf.changes``, moved by every
save, unsave and tag change) or the model (a new day). Storing is one transaction under the
reader's shelf row, so two refits racing for one reader leave one complete set.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.utils import timezone
from scipy.sparse import vstack
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from ..models import Recommendation, SavedPaper, Shelf
from . import pool as pools
from . import text

REASON_TERMS = 3


@dataclass(frozen=True, slots=True)
class Group:
    tag_id: int | None
    paper_ids: list[int]


def groups_of(*, user_id: int) -> list[Group]:
    """What the reader's classifiers learn: each tag's papers, and the untagged ones as the
    whole library (hidden papers are left out: nothing is learned from what nobody sees)."""
    by_tag: dict[int, list[int]] = defaultdict(list)
    untagged: list[int] = []
    everything: list[int] = []
    rows = SavedPaper.objects.filter(user_id=user_id, paper__hidden=False).values_list(
        "paper_id", "tags"
    )
    seen_tagged: set[int] = set()
    for paper_id, tag_id in rows:
        if paper_id not in everything:
            everything.append(paper_id)
        if tag_id is not None:
            by_tag[tag_id].append(paper_id)
            seen_tagged.add(paper_id)
    untagged = [pk for pk in everything if pk not in seen_tagged]
    groups = [Group(tag_id, ids) for tag_id, ids in sorted(by_tag.items())]
    if untagged or not groups:
        groups.append(Group(None, everything))
    return [group for group in groups if group.paper_ids]


@dataclass(frozen=True, slots=True)
class Scored:
    paper_id: int
    score: float
    group: Group
    terms: list[str]


def score(*, user_id: int, pool: pools.Pool) -> list[Scored]:
    """The reader's best ``RECOMMEND_PER_READER`` new papers, best first."""
    groups = groups_of(user_id=user_id)
    if not groups or not pool.candidates:
        return []
    saved = {pk for group in groups for pk in group.paper_ids}
    own = [pk for pk in dict.fromkeys(pk for g in groups for pk in g.paper_ids)]
    outside = [pk for pk in own if pk not in pool.index]
    features = vstack([pool.matrix, pool.rows(outside)], format="csr") if outside else pool.matrix
    row_of = dict(pool.index)
    row_of.update({pk: len(pool.ids) + n for n, pk in enumerate(outside)})
    candidates = pool.candidate_matrix
    best = np.full(len(pool.candidates), -np.inf)
    best_group = np.zeros(len(pool.candidates), dtype=np.int32)
    weights: list[np.ndarray | None] = []
    for number, group in enumerate(groups):
        labels = np.zeros(features.shape[0], dtype=np.int8)
        labels[[row_of[pk] for pk in group.paper_ids]] = 1
        if labels.all():
            weights.append(None)
            continue
        classifier = LinearSVC(class_weight="balanced", C=0.01, max_iter=2000)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            classifier.fit(features, labels)
        weights.append(classifier.coef_.ravel())
        scores = classifier.decision_function(candidates)
        better = scores > best
        best[better] = scores[better]
        best_group[better] = number
    order = np.argsort(-best, kind="stable")
    chosen: list[Scored] = []
    for row in order:
        paper_id = pool.candidates[row]
        if paper_id in saved or not np.isfinite(best[row]):
            continue
        group_number = int(best_group[row])
        coef = weights[group_number]
        chosen.append(
            Scored(
                paper_id,
                float(best[row]),
                groups[group_number],
                top_terms(candidates[row], coef, pool.model.names) if coef is not None else [],
            )
        )
        if len(chosen) >= settings.RECOMMEND_PER_READER:
            break
    return chosen


def top_terms(vector, coef: np.ndarray, names) -> list[str]:
    """The words that add most to the paper's score: its tf-idf weight × the classifier's."""
    row = vector.tocsr()
    contributions = row.data * coef[row.indices]
    order = np.argsort(-contributions)[:REASON_TERMS]
    return [str(names[row.indices[i]]) for i in order if contributions[i] > 0]


def refit(*, user_id: int, pool: pools.Pool | None = None) -> int:
    """Fit the reader's classifiers and store their top papers; how many were stored."""
    model = pool.model if pool is not None else text.current()
    shelf, _ = Shelf.objects.get_or_create(user_id=user_id)
    changes = shelf.changes  # read before the library: a save after this asks again
    if model is None:
        return 0
    pool = pool or pools.current(model)
    scored = score(user_id=user_id, pool=pool)
    with transaction.atomic():
        # The shelf row serialises refits of one reader: the later one's set wins whole.
        Shelf.objects.select_for_update().filter(user_id=user_id).first()
        Recommendation.objects.filter(user_id=user_id).delete()
        Recommendation.objects.bulk_create(
            Recommendation(
                user_id=user_id,
                paper_id=item.paper_id,
                tag_id=item.group.tag_id,
                rank=rank,
                score=item.score,
                liked=len(item.group.paper_ids),
                terms=item.terms,
            )
            for rank, item in enumerate(scored, start=1)
        )
        Shelf.objects.filter(user_id=user_id).update(
            fitted_changes=changes, fitted_model=model.id, fitted_at=timezone.now()
        )
    return len(scored)


def readers_with_a_library() -> list[int]:
    """Every reader who has a library, by id: whom the nightly run refits."""
    return list(Shelf.objects.order_by("user_id").values_list("user_id", flat=True))


def refit_readers(*, only_changed: bool) -> dict[str, int]:
    """Refit every reader with a library (the nightly run: a new day changes everyone's
    candidates), or only those whose library or model changed since their last fit."""
    model = text.current()
    if model is None:
        return {"readers": 0, "stored": 0}
    pool = pools.current(model)
    shelves = Shelf.objects.all()
    if only_changed:
        from django.db.models import F, Q

        shelves = shelves.filter(~Q(fitted_changes=F("changes")) | ~Q(fitted_model=model.id))
    readers = stored = 0
    for user_id in shelves.order_by("user_id").values_list("user_id", flat=True).iterator():
        stored += refit(user_id=user_id, pool=pool)
        readers += 1
    return {"readers": readers, "stored": stored}
