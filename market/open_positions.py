"""Positions in the open: on a term's page, what its verified authors (authorship's approved
claims) hold of it, and their trades in it within a week before they submitted a paper that
mentions it, when only they could know the paper's words.

Kept as a piece of the term page under the term's stamp (every trade), the claims stamp (an
approval or withdrawal), the mentions and papers stamps (a paper's mentions and submission
time) and the traders stamp (a private trader is not named: market.public_names).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.urls import reverse

from authorship.models import Claim
from peerrevenue import keep, replicas

from . import public_names
from .models import Holding, Mention, Term, Trade

# How long before a paper's submission an author's trades in its words are shown.
WINDOW = dt.timedelta(days=7)
# The claims stamp (authorship/sql/stamps.sql), read with the term page.
FACT = "claims"


@dataclass(frozen=True, slots=True)
class OwnPaper:
    arxiv_id: str
    title: str
    url: str
    submitted_at: dt.datetime | None


@dataclass(frozen=True, slots=True)
class EarlyTrade:
    when: dt.datetime
    side: str
    shares: int
    paper: OwnPaper  # the paper submitted within a week after it


@dataclass(slots=True)
class AuthorPosition:
    name: str
    url: str  # their trader page, or "" when it is private
    shares: int = 0
    papers: list[OwnPaper] = field(default_factory=list)  # theirs, mentioning the term
    trades: list[EarlyTrade] = field(default_factory=list)


def open_positions(*, term: Term) -> list[AuthorPosition]:
    """Verified authors who hold ``term`` or wrote a paper mentioning it and traded it in the
    week before submitting that paper; most shares first."""
    mentioned = Mention.objects.filter(term=term).values("paper_id")
    own = (
        Claim.objects.verified()
        .filter(paper_id__in=mentioned, paper__hidden=False)
        .select_related("paper")
        .order_by("paper__submitted_at", "paper_id")
    )
    papers_of: dict[int, list[OwnPaper]] = {}
    for claim in own:
        papers_of.setdefault(claim.user_id, []).append(
            OwnPaper(
                claim.paper.arxiv_id,
                claim.paper.title_text or claim.paper.title,
                claim.paper.get_absolute_url(),
                claim.paper.submitted_at,
            )
        )
    verified = Claim.objects.verified().values("user_id")
    holdings = dict(
        Holding.objects.filter(term=term, shares__gt=0, account__user_id__in=verified).values_list(
            "account__user_id", "shares"
        )
    )
    users = set(holdings) | set(papers_of)
    if not users:
        return []
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT user_id FROM ({public_names.private_sql()}) AS p (user_id)"
            " WHERE user_id = ANY(%s)",
            [sorted(users)],
        )
        private = {row[0] for row in cursor.fetchall()}
    names = dict(get_user_model().objects.filter(pk__in=users).values_list("pk", "username"))
    found: dict[int, AuthorPosition] = {}
    for user_id in users:
        named = user_id not in private
        found[user_id] = AuthorPosition(
            name=names[user_id] if named else public_names.HIDDEN_NAME,
            url=reverse("trader", args=[names[user_id]]) if named else "",
            shares=holdings.get(user_id, 0),
            papers=papers_of.get(user_id, []),
        )
    for user_id, own_papers in papers_of.items():
        for own_paper in own_papers:
            if own_paper.submitted_at is None:
                continue
            trades = Trade.objects.filter(
                term=term,
                account__user_id=user_id,
                created_at__gte=own_paper.submitted_at - WINDOW,
                created_at__lt=own_paper.submitted_at,
            ).order_by("created_at", "id")
            found[user_id].trades += [
                EarlyTrade(trade.created_at, trade.side, trade.shares, own_paper)
                for trade in trades
            ]
    shown = [p for p in found.values() if p.shares or p.trades]
    return sorted(shown, key=lambda p: (-p.shares, p.name))


def positions_piece(*, slug: str, term_id: int, facts: keep.Facts) -> str:
    """The term page's section, kept under what it shows (see the module docstring)."""

    def render() -> str:
        term = Term.objects.get(pk=term_id)
        return keep.render_piece(
            "market/_open_positions.html",
            {"term": term, "positions": open_positions(term=term), "days": WINDOW.days},
            facts=facts,
        )

    return keep.get_or_make(
        keep.key(
            "market-term-open-positions",
            slug,
            facts["term", slug],
            facts[FACT],
            facts["mentions"],
            facts["papers"],
            facts[public_names.FACT],
        ),
        render,
        size=len,
    )
