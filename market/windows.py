"""Submission windows: when a paper's words were known only to its authors (and arXiv), and the
shares of a term held right through that time.

A paper's window opens when its first version was submitted and closes when its listing day
is announced (``papers.calendar.announced_at``). Where the source gave no submission time (the
RSS feed without the API's enrichment) it opens at the start of the listing day's submission
period (``papers.calendar.submission_period_start``), the earliest the paper can have been
submitted for that day. A dividend pays, to each holder, the lowest balance they held at any
moment of the window: shares bought inside it earn nothing from the paper, whoever bought them,
and shares sold inside it are not paid either (market/rules.md, "Who is paid").
"""

from __future__ import annotations

import datetime as dt
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection

from papers.calendar import announced_at, submission_period_start
from papers.models import Paper

from .models import DividendEvent, Term, Trade


@dataclass(frozen=True, slots=True)
class Window:
    opens: dt.datetime
    closes: dt.datetime  # the announcement
    source: str  # DividendEvent.WindowSource: from the submission time, or the period


def window_for(*, submitted_at: dt.datetime | None, listing_date: dt.date) -> Window:
    """The window of a paper first submitted at ``submitted_at`` (None when unknown) and
    announced on ``listing_date``. A submission time after the announcement (a source's error)
    leaves an empty window: the shares held at the announcement are paid, as before the rule."""
    closes = announced_at(listing_date)
    if submitted_at is None:
        return Window(
            opens=min(submission_period_start(listing_date), closes),
            closes=closes,
            source=DividendEvent.WindowSource.PERIOD,
        )
    return Window(
        opens=min(submitted_at, closes), closes=closes, source=DividendEvent.WindowSource.SUBMITTED
    )


class Balances:
    """Each account's balance of one term over time, from its trades, read in one statement:
    ``lowest(account, opens)`` is the least it held at any moment from ``opens`` to the end.

    A trade counts from its ``created_at`` (its transaction's start, as the ledger check reads
    it); trades at the same instant count together, as one move. Everything before the
    earliest window wanted is summed into one point per account, so the rows read are the
    holders plus the trades inside the windows.
    """

    def __init__(self, *, term: Term, earliest: dt.datetime, end: dt.datetime):
        trades = connection.ops.quote_name(Trade._meta.db_table)
        with connection.cursor() as cursor:
            cursor.execute(
                f"""WITH moves AS (
                    SELECT account_id, GREATEST(created_at, %s) AS at,
                           SUM(CASE side WHEN 'buy' THEN shares ELSE -shares END) AS delta
                    FROM {trades} WHERE term_id = %s AND created_at <= %s
                    GROUP BY 1, 2)
                SELECT account_id, at,
                       SUM(delta) OVER (PARTITION BY account_id ORDER BY at)::bigint
                FROM moves ORDER BY account_id, at""",  # noqa: S608 - the table name only
                [earliest, term.pk, end],
            )
            rows = cursor.fetchall()
        # account → (instants, balance after each, lowest balance from each to the end)
        self._series: dict[int, tuple[list[dt.datetime], list[int], list[int]]] = {}
        for account_id, at, balance in rows:
            series = self._series.setdefault(account_id, ([], [], []))
            series[0].append(at)
            series[1].append(balance)
        for _, balances, lowest in self._series.values():
            lowest.extend(balances)
            for i in range(len(lowest) - 2, -1, -1):
                lowest[i] = min(lowest[i], lowest[i + 1])

    @property
    def accounts(self) -> Iterable[int]:
        return self._series.keys()

    def lowest(self, account_id: int, opens: dt.datetime) -> int:
        """The least ``account_id`` held at any moment from ``opens`` to the end (never below
        zero): its balance at ``opens``, or lower after a sale inside the window."""
        instants, balances, lowest = self._series[account_id]
        i = bisect_right(instants, opens)  # moves at or before ``opens``: the balance then
        held = balances[i - 1] if i else 0
        if i < len(instants):
            held = min(held, lowest[i])
        return max(held, 0)

    def held_through(self, opens: dt.datetime) -> list[tuple[int, int]]:
        """(account id, shares) held through the whole window from ``opens``, in account id
        order; accounts with none left out."""
        held = ((account_id, self.lowest(account_id, opens)) for account_id in self.accounts)
        return sorted((account_id, shares) for account_id, shares in held if shares > 0)


def paper_windows(*, paper_ids: Iterable[int], listing_date: dt.date) -> dict[int, Window]:
    """Each paper's window for its announcement on ``listing_date``, in one query."""
    return {
        paper_id: window_for(submitted_at=submitted_at, listing_date=listing_date)
        for paper_id, submitted_at in Paper.objects.filter(pk__in=list(paper_ids)).values_list(
            "pk", "submitted_at"
        )
    }
