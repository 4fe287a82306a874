"""What is hot: papers ranked by what readers and traders did over a day, a week or a month.

A paper's score is ``SAVE_WEIGHT`` × the readers who saved it in the period, plus the trades
made in the period in the terms it mentions, for papers announced in the period (a mention
counted on their announcement day): attention the market paid to what the paper is about. Both
counts are shown. Hidden papers never rank.

One query over the period's saves, trades and mentions; the page keeps its result under the
saves and prices facts and a five-minute clock (the window's edge moves), so a request reads
a kept piece.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.utils import timezone

from peerrevenue import replicas

PERIODS = {"day": 1, "week": 7, "month": 30}
SAVE_WEIGHT = 5
SHOWN = 30


@dataclass(frozen=True, slots=True)
class Hot:
    paper_id: int
    saves: int
    trades: int
    terms: list[str]  # the most traded terms it mentions


def ranking(
    *, period: str, category: str | None = None, now: dt.datetime | None = None, limit: int = SHOWN
) -> list[Hot]:
    since = (now or timezone.now()) - dt.timedelta(days=PERIODS[period])
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            """
            WITH saves AS (
              SELECT paper_id, count(*) AS saves FROM library_savedpaper
              WHERE saved_at >= %(since)s GROUP BY paper_id
            ), traded AS (
              SELECT term_id, count(*) AS trades FROM market_trade
              WHERE created_at >= %(since)s GROUP BY term_id
            ), attention AS (
              SELECT m.paper_id, sum(t.trades) AS trades,
                     (array_agg(term.phrase ORDER BY t.trades DESC, term.phrase))[1:3] AS terms
              FROM market_mention AS m
              JOIN traded AS t ON t.term_id = m.term_id
              JOIN market_term AS term ON term.id = m.term_id
              WHERE m.date >= %(since_day)s
              GROUP BY m.paper_id
            )
            SELECT p.id, coalesce(s.saves, 0), coalesce(a.trades, 0), coalesce(a.terms, '{}')
            FROM saves AS s
            FULL JOIN attention AS a ON a.paper_id = s.paper_id
            JOIN papers_paper AS p ON p.id = coalesce(s.paper_id, a.paper_id)
            WHERE NOT p.hidden
              AND (%(category)s::text IS NULL
                   OR p.categories @> jsonb_build_array(%(category)s::text))
            ORDER BY coalesce(s.saves, 0) * %(weight)s + coalesce(a.trades, 0) DESC, p.id DESC
            LIMIT %(limit)s
            """,
            {
                "since": since,
                "since_day": since.date(),
                "category": category,
                "weight": SAVE_WEIGHT,
                "limit": limit,
            },
        )
        return [Hot(pk, saves, int(trades), list(terms)) for pk, saves, trades, terms in cursor]


def hot_papers(*, period: str, category: str | None = None, limit: int = SHOWN) -> list[tuple]:
    """The ranking with its papers loaded: ``[(paper, Hot), …]``, best first."""
    from papers.models import Paper

    ranked = ranking(period=period, category=category, limit=limit)
    papers = Paper.objects.defer("search_vector").in_bulk([item.paper_id for item in ranked])
    return [(papers[item.paper_id], item) for item in ranked if item.paper_id in papers]
