"""No pay for your own words: the shares a verified author holds earn no dividend from their own
paper. What they would have earned is recorded (``WithheldDividend``, with the claim that made
them its author) and shown where the payout is explained and on the author's trader page.

A verified author is the reader of an approved ``authorship.Claim`` at the moment of the payout.
The payout reads them after locking the papers' rows FOR SHARE, and an approval locks the same
row first (market/sql/claim_decisions.sql), so a claim approved while the day's dividends are
paid is either seen by the payout (the author's shares withheld) or approved after it commits
(dated after it): never half of each, and the ledger check can tell which.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.db import connection

from authorship.models import Claim
from papers.models import Paper

from .models import Account, DividendEvent, WithheldDividend


def authors_of(*, paper_ids: Sequence[int]) -> dict[int, dict[int, int]]:
    """Paper id → {account id of a verified author: the approving claim's id}, read after
    taking a shared lock on the papers' rows, kept until the caller's transaction ends (an
    approval of a claim to one of them waits for it)."""
    if not paper_ids:
        return {}
    papers = connection.ops.quote_name(Paper._meta.db_table)
    claims = connection.ops.quote_name(Claim._meta.db_table)
    accounts = connection.ops.quote_name(Account._meta.db_table)
    with connection.cursor() as cursor:
        # In id order, as every payout takes them: payouts share these locks anyway, and an
        # approval waits for all of them.
        cursor.execute(
            f"SELECT id FROM {papers} WHERE id = ANY(%s) ORDER BY id FOR SHARE",  # noqa: S608
            [sorted(paper_ids)],
        )
        # The claims are read by a second statement, never joined to the locking one: a
        # statement that waited for an approval's lock re-checks only the row it locked and
        # keeps the other tables' rows from its snapshot, taken before the approval committed
        # (READ COMMITTED's re-check), so it would see the claim still pending and pay the
        # author. This statement's snapshot is taken once the locks are held, after any
        # approval of these papers committed.
        cursor.execute(
            f"""SELECT c.paper_id, c.id, a.id FROM {claims} c
            JOIN {accounts} a ON a.user_id = c.user_id
            WHERE c.paper_id = ANY(%s) AND c.status = %s""",  # noqa: S608 - names only
            [sorted(paper_ids), Claim.Status.APPROVED],
        )
        rows = cursor.fetchall()
    found: dict[int, dict[int, int]] = {}
    for paper_id, claim_id, account_id in rows:
        if claim_id is not None and account_id is not None:
            found.setdefault(paper_id, {})[account_id] = claim_id
    return found


def record_withheld(
    rows: Iterable[tuple[int, int, int, int]], *, events: Mapping[int, DividendEvent]
) -> None:
    """Record (paper id, account id, claim id, shares) withheld from the ``events`` just made
    (paper id → its dividend)."""
    WithheldDividend.objects.bulk_create(
        [
            WithheldDividend(
                event=events[paper_id], account_id=account_id, claim_id=claim_id, shares=shares
            )
            for paper_id, account_id, claim_id, shares in rows
        ]
    )


@dataclass(frozen=True, slots=True)
class Withheld:
    term_phrase: str
    term_url: str
    paper: Paper
    date: object
    shares: int
    amount: int  # µ¢


def withheld_from(*, user) -> list[Withheld]:
    """What this reader's shares did not earn from their own papers, newest first."""
    rows = (
        WithheldDividend.objects.filter(account__user=user)
        .select_related("event__term", "event__paper")
        .order_by("-event__date", "-id")
    )
    return [
        Withheld(
            term_phrase=row.event.term.phrase,
            term_url=row.event.term.get_absolute_url(),
            paper=row.event.paper,
            date=row.event.date,
            shares=row.shares,
            amount=row.shares * row.event.per_share,
        )
        for row in rows
    ]


def withheld_on(event: DividendEvent) -> tuple[int, int]:
    """(shares, µ¢) withheld from verified authors on one dividend."""
    shares = sum(WithheldDividend.objects.filter(event=event).values_list("shares", flat=True))
    return shares, shares * event.per_share
