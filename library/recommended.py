"""What a request reads of the worker's stored scores: a reader's picks, a paper's similar
papers. Rows only; nothing is fitted here. Hidden papers are left out at reading, so hiding a
paper takes it out of every stored list at once.

``for_you`` is what every "for you" (the page, the front page's section, the digest) says:
the picks, or why there are none (nothing saved: how to start; saved but not fitted yet;
nothing new like the library)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Literal

from django.db.models import Exists, OuterRef

from papers.models import Listing, Paper

from .models import Recommendation, SavedPaper, Shelf, SimilarList


@dataclass(frozen=True, slots=True)
class Pick:
    paper: Paper
    reason: str
    terms: list[str]
    tag_id: int | None
    tag_name: str | None


def reason_of(row: Recommendation) -> str:
    papers = f"{row.liked} paper{'s' if row.liked != 1 else ''}"
    if row.tag is not None:
        return f"like {papers} in “{row.tag.name}”"
    return f"like {papers} in your library"


def recommended(
    *,
    user_id: int,
    limit: int = 30,
    offset: int = 0,
    announced: tuple[dt.date, dt.date] | None = None,
) -> list[Pick]:
    """The reader's stored picks, best first; ``announced=(first, last)``: only papers
    announced (new or cross-listed) on those days."""
    rows = Recommendation.objects.filter(user_id=user_id, paper__hidden=False)
    if announced is not None:
        rows = rows.filter(
            Exists(
                Listing.objects.filter(
                    paper_id=OuterRef("paper_id"),
                    date__range=announced,
                    announce_type__in=[Listing.AnnounceType.NEW, Listing.AnnounceType.CROSS],
                )
            )
        )
    rows = (
        rows.select_related("paper", "tag")
        .defer("paper__search_vector")
        .order_by("rank")[offset : offset + limit]
    )
    return [
        Pick(row.paper, reason_of(row), row.terms, row.tag_id, row.tag.name if row.tag else None)
        for row in rows
    ]


State = Literal["empty", "pending", "nothing-new", "ready"]


@dataclass(frozen=True, slots=True)
class ForYou:
    state: State
    picks: list[Pick]
    saved: int  # visible papers in the reader's library


def for_you(*, user_id: int, limit: int) -> ForYou:
    """The reader's picks, or why there are none: ``empty`` (nothing saved: tell them how to
    start, show what is hot), ``pending`` (saved since the last fit: the worker is on it),
    ``nothing-new`` (fitted, but no new paper is like their library)."""
    picks = recommended(user_id=user_id, limit=limit)
    saved = SavedPaper.objects.filter(user_id=user_id, paper__hidden=False).count()
    state: State
    if not saved:
        state = "empty"
    elif picks:
        state = "ready"
    else:
        fitted = (
            Shelf.objects.filter(user_id=user_id).values_list("changes", "fitted_changes").first()
        )
        state = "pending" if fitted is None or fitted[0] != fitted[1] else "nothing-new"
    return ForYou(state, picks, saved)


def recommendation_count(*, user_id: int) -> int:
    return Recommendation.objects.filter(user_id=user_id, paper__hidden=False).count()


def similar_papers(*, paper_id: int) -> list[Paper] | None:
    """The stored similar papers, best first; None when the worker has not found them yet."""
    found = SimilarList.objects.filter(paper_id=paper_id).values_list("similar", flat=True).first()
    if found is None:
        return None
    ids = [int(pk) for pk, _score in found]
    papers = Paper.objects.visible().defer("search_vector").in_bulk(ids)
    return [papers[pk] for pk in ids if pk in papers]
