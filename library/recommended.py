"""What a request reads of the worker's stored scores: a reader's picks, a paper's similar
papers. Rows only; nothing is fitted here. Hidden papers are left out at reading, so hiding a
paper takes it out of every stored list at once."""

from __future__ import annotations

from dataclasses import dataclass

from papers.models import Paper

from .models import Recommendation, SimilarList


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


def recommended(*, user_id: int, limit: int = 30, offset: int = 0) -> list[Pick]:
    rows = (
        Recommendation.objects.filter(user_id=user_id, paper__hidden=False)
        .select_related("paper", "tag")
        .defer("paper__search_vector")
        .order_by("rank")[offset : offset + limit]
    )
    return [
        Pick(row.paper, reason_of(row), row.terms, row.tag_id, row.tag.name if row.tag else None)
        for row in rows
    ]


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
