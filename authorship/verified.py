"""Who a paper's verified authors are, for the apps after this one (market's dividends and
term pages, library's hot list, accounts' trader pages)."""

from __future__ import annotations

from collections.abc import Iterable

from .models import Claim


def verified_author_ids(*, paper_ids: Iterable[int]) -> dict[int, set[int]]:
    """Paper id → the ids of readers whose claim to it a curator approved. Papers without a
    verified author are absent."""
    found: dict[int, set[int]] = {}
    rows = Claim.objects.verified().filter(paper_id__in=list(paper_ids))
    for paper_id, user_id in rows.values_list("paper_id", "user_id"):
        found.setdefault(paper_id, set()).add(user_id)
    return found


def verified_author_ids_sql(paper_id: str) -> str:
    """An array of the ids of the paper's verified authors (NULL: none), as a subquery for a
    statement that reads them with other things in one round trip; ``paper_id`` is that
    statement's placeholder (or column) for the paper's id."""
    status = Claim.Status.APPROVED.value
    assert status.isidentifier()  # inlined below: a constant of ours, never a reader's text
    return (
        f"(SELECT array_agg(user_id) FROM {Claim._meta.db_table}"  # noqa: S608 - ours
        f" WHERE paper_id = {paper_id} AND status = '{status}')"
    )
