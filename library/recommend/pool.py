"""The papers a refit scores and learns against, as one matrix shared by every reader.

- candidates: papers first announced (new or cross-list) in the last ``RECOMMEND_DAYS`` days
  of listings, counted back from the newest listing (a paused ingest still has "new" papers);
- background: ``RECOMMEND_BACKGROUND_PAPERS`` other visible papers, a fixed pseudo-random
  sample per day, so that a classifier learns what a reader's papers are *not* like from
  more than one week's topics (arxiv-sanity learns against every paper; this bounds it).

Built once per process for a model and a day and kept (a few MB at the defaults): a reader's
refit after a save then costs one SVM fit, not a transform of thousands of papers.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from scipy.sparse import csr_matrix

from papers.models import Listing
from peerrevenue import replicas

from .text import Loaded, newest_listing


@dataclass(slots=True)
class Pool:
    model: Loaded
    newest: dt.date | None
    candidates: list[int]  # paper ids, the first rows of ``matrix``
    ids: list[int]  # candidates, then background
    matrix: csr_matrix
    index: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {pk: row for row, pk in enumerate(self.ids)}

    @property
    def candidate_matrix(self) -> csr_matrix:
        return self.matrix[: len(self.candidates)]

    def rows(self, paper_ids: Sequence[int]) -> csr_matrix:
        """Vectors of ``paper_ids``: from the pool where it has them, else transformed."""
        from scipy.sparse import vstack

        if not paper_ids:
            return self.matrix[:0]
        missing = [pk for pk in paper_ids if pk not in self.index]
        extra = self.model.vectors(missing) if missing else self.matrix[:0]
        extra_row = {pk: n for n, pk in enumerate(missing)}
        parts = [
            self.matrix[self.index[pk]] if pk in self.index else extra[extra_row[pk]]
            for pk in paper_ids
        ]
        return vstack(parts, format="csr")


def candidate_ids(*, newest: dt.date | None) -> list[int]:
    if newest is None:
        return []
    since = newest - dt.timedelta(days=settings.RECOMMEND_DAYS - 1)
    return list(
        Listing.objects.filter(
            date__gte=since,
            announce_type__in=[Listing.AnnounceType.NEW, Listing.AnnounceType.CROSS],
            paper__hidden=False,
        )
        .order_by("paper_id")
        .values_list("paper_id", flat=True)
        .distinct()[: settings.RECOMMEND_POOL_PAPERS]
    )


def background_ids(*, exclude: set[int], newest: dt.date | None, count: int) -> list[int]:
    # A sample that stays the same for a day (the seed is the day), drawn by the database
    # from the ids alone: no paper text is read for the papers left out.
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            "SELECT id FROM papers_paper WHERE NOT hidden ORDER BY md5(id::text || %s) LIMIT %s",
            [str(newest), count + len(exclude)],
        )
        found = [pk for (pk,) in cursor.fetchall() if pk not in exclude]
    return found[:count]


_kept: dict[tuple[int, int], Pool] = {}
_lock = threading.Lock()


def papers_stamp() -> int:
    """``kept_stamp('papers')``: moved by any change of a paper or listing (an ingest)."""
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute("SELECT value FROM kept_stamp WHERE name = 'papers'")
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def current(model: Loaded) -> Pool:
    """The pool for ``model`` and the papers as they are, built once per process."""
    wanted = (model.id, papers_stamp())
    newest = newest_listing()
    with _lock:
        found = _kept.get(wanted)
        if found is None:
            found = build(model, newest=newest)
            _kept.clear()  # one pool at a time: the old day's is never asked for again
            _kept[wanted] = found
        return found


def build(model: Loaded, *, newest: dt.date | None) -> Pool:
    candidates = candidate_ids(newest=newest)
    background = background_ids(
        exclude=set(candidates), newest=newest, count=settings.RECOMMEND_BACKGROUND_PAPERS
    )
    ids = candidates + background
    return Pool(model, newest, candidates, ids, model.vectors(ids))


def forget() -> None:
    """Drop the kept pool (tests change papers between cases)."""
    with _lock:
        _kept.clear()
