"""What is hot: papers ranked by what readers and traders did over a day, a week or a month.

A paper's score is ``SAVE_WEIGHT`` × the readers who saved it in the period, plus the trades
made in the period in the terms it mentions, for papers announced in the period (a mention
counted on their announcement day): attention the market paid to what the paper is about. Both
counts are shown. Hidden papers never rank, and a paper's verified authors (authorship) add
nothing to its own counts.

Counting a month of saves and trades is the expensive part (at 300,000 papers and 28,000 recent
saves, half a second), so a request never does it: ``refresh`` ranks every period and stores
the best ``KEPT`` of each (``HotPaper``), and a request reads the first rows of one period by
its (period, rank) key, leaving out papers hidden since. ``HotRanking`` says which periods were
ranked: an empty list before the first refresh reads "not yet", not "nothing happened". The
stored lists are refreshed at most every ``REFRESH_SECONDS``: the first reader after that asks
the worker (``refresh_soon``).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.core.cache import cache
from django.db import connection, transaction
from django.utils import timezone

from peerrevenue import replicas
from peerrevenue.queueing import send_from_request
from peerrevenue.retries import database_task

from .models import HotPaper, HotRanking

if TYPE_CHECKING:
    from papers.models import Paper

PERIODS = {"day": 1, "week": 7, "month": 30}
SAVE_WEIGHT = 5
SHOWN = 30
KEPT = 1000  # stored per period: enough for a category's tab to find its 30
REFRESH_SECONDS = 300


@dataclass(frozen=True, slots=True)
class Hot:
    paper_id: int
    saves: int
    trades: int
    terms: list[str]  # the most traded terms it mentions


# Scores by paper id alone: no paper row is read here (checking each of 27,000 saved papers'
# rows for ``hidden`` was most of the half second), only for the best ones afterwards.
# Self-promotion counts nothing: a verified author's save of their own paper, and their trades
# in the terms their own paper mentions (authorship's approved claims), are left out of that
# paper's counts. Claims are few, so ``own_trades`` starts from them and costs little.
SCORES_SQL = """
WITH saves AS (
  SELECT s.paper_id, count(*) AS saves FROM library_savedpaper AS s
  WHERE s.saved_at >= %(since)s
    AND NOT EXISTS (
      SELECT 1 FROM authorship_claim AS c
      WHERE c.paper_id = s.paper_id AND c.user_id = s.user_id AND c.status = 'approved'
    )
  GROUP BY s.paper_id
), traded AS (
  SELECT term_id, count(*) AS trades FROM market_trade
  WHERE created_at >= %(since)s GROUP BY term_id
), own_trades AS (
  SELECT m.paper_id, m.term_id, count(*) AS trades
  FROM authorship_claim AS c
  JOIN market_mention AS m ON m.paper_id = c.paper_id AND m.date >= %(since_day)s
  JOIN market_account AS a ON a.user_id = c.user_id
  JOIN market_trade AS tr
    ON tr.account_id = a.id AND tr.term_id = m.term_id AND tr.created_at >= %(since)s
  WHERE c.status = 'approved'
  GROUP BY m.paper_id, m.term_id
), attention AS (
  SELECT m.paper_id, sum(t.trades - coalesce(o.trades, 0)) AS trades,
         (array_agg(term.phrase ORDER BY t.trades - coalesce(o.trades, 0) DESC, term.phrase))[1:3]
           AS terms
  FROM market_mention AS m
  JOIN traded AS t ON t.term_id = m.term_id
  JOIN market_term AS term ON term.id = m.term_id
  LEFT JOIN own_trades AS o ON o.paper_id = m.paper_id AND o.term_id = m.term_id
  WHERE m.date >= %(since_day)s AND t.trades > coalesce(o.trades, 0)
  GROUP BY m.paper_id
)
SELECT coalesce(s.paper_id, a.paper_id) AS paper_id, coalesce(s.saves, 0),
       coalesce(a.trades, 0), coalesce(a.terms, '{}')
FROM saves AS s FULL JOIN attention AS a ON a.paper_id = s.paper_id
ORDER BY coalesce(s.saves, 0) * %(weight)s + coalesce(a.trades, 0) DESC, 1 DESC
LIMIT %(batch)s OFFSET %(offset)s
"""


def compute(
    *, period: str, now: dt.datetime | None = None, limit: int = KEPT
) -> list[tuple[Hot, list[str]]]:
    """The period's best ``limit`` visible papers, counted now, with their categories."""
    since = (now or timezone.now()) - dt.timedelta(days=PERIODS[period])
    found: list[tuple[Hot, list[str]]] = []
    offset, batch = 0, limit + 50  # a few hidden papers cost no second round
    with connection.cursor() as cursor:
        while len(found) < limit:
            cursor.execute(
                SCORES_SQL,
                {
                    "since": since,
                    "since_day": since.date(),
                    "weight": SAVE_WEIGHT,
                    "batch": batch,
                    "offset": offset,
                },
            )
            scored = cursor.fetchall()
            cursor.execute(
                "SELECT id, categories FROM papers_paper WHERE id = ANY(%s) AND NOT hidden",
                [[row[0] for row in scored]],
            )
            visible = dict(cursor.fetchall())
            for pk, saves, trades, terms in scored:
                if pk in visible:
                    hot = Hot(pk, saves, int(trades), list(terms))
                    found.append((hot, _listed(visible[pk])))
            if len(scored) < batch:
                break
            offset += batch
    return found[:limit]


def _listed(value: str | list[str]) -> list[str]:
    # jsonb comes back as text through Django's connection, as a list through a bare one.
    return list(json.loads(value) if isinstance(value, str) else value)


def refresh(*, now: dt.datetime | None = None) -> dict[str, int]:
    """Rank every period now and store the lists whole; how many rows each period has."""
    now = now or timezone.now()
    counted = {period: compute(period=period, now=now) for period in PERIODS}
    with transaction.atomic():
        # Two refreshes at once (a beat and a reader's ask) store one after the other: a
        # transaction-level advisory lock, fine behind a transaction pooler.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext('library.hot'))")
        HotPaper.objects.all().delete()
        HotPaper.objects.bulk_create(
            HotPaper(
                period=period,
                rank=rank,
                paper_id=item.paper_id,
                saves=item.saves,
                trades=item.trades,
                terms=item.terms,
                categories=categories,
                ranked_at=now,
            )
            for period, rows in counted.items()
            for rank, (item, categories) in enumerate(rows, start=1)
        )
        # Which periods were ranked: an empty list is then "nothing happened", not "not yet".
        HotRanking.objects.all().delete()
        HotRanking.objects.bulk_create(
            HotRanking(period=period, ranked_at=now, papers=len(rows))
            for period, rows in counted.items()
        )
    cache.set(REFRESHED, 1, timeout=REFRESH_SECONDS)  # whoever refreshed, the clock restarts
    return {period: len(rows) for period, rows in counted.items()}


REFRESHED = "library:hot-refreshed"


def _due() -> bool:
    """True once per ``REFRESH_SECONDS`` after the last refresh, for the whole site (the
    shared cache decides; without it, every asker is told to refresh)."""
    # A read first: most requests find the mark, and a read is cheaper than an add (with the
    # database cache, an add is a transaction of its own).
    return cache.get(REFRESHED) is None and cache.add(REFRESHED, 1, timeout=REFRESH_SECONDS)


# A request queues it (``refresh_soon``), so the task lives here; its name is the one it had in
# library/tasks.py, so queued messages still find it.
@database_task("library.tasks.refresh_hot", max_retries=3)
def refresh_hot() -> dict[str, int]:
    return refresh()


def refresh_soon() -> None:
    """From a request: ask the worker to rank again if the lists are due."""
    if _due():
        send_from_request(refresh_hot, what="a refresh of the hot lists")


def refresh_if_due() -> None:
    """From the worker (the digests): rank again here if the lists are due."""
    if _due():
        refresh()


def ranking(*, period: str, category: str | None = None, limit: int = SHOWN) -> list[Hot]:
    """The stored list of ``period`` (of ``category``), best first: hidden papers left out."""
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            """
            SELECT h.paper_id, h.saves, h.trades, h.terms
            FROM library_hotpaper AS h JOIN papers_paper AS p ON p.id = h.paper_id
            WHERE h.period = %(period)s AND NOT p.hidden
              AND (%(category)s::text IS NULL
                   OR h.categories @> jsonb_build_array(%(category)s::text))
            ORDER BY h.rank
            LIMIT %(limit)s
            """,
            {"period": period, "category": category, "limit": limit},
        )
        return [
            Hot(
                pk, saves, int(trades), list(json.loads(terms) if isinstance(terms, str) else terms)
            )
            for pk, saves, trades, terms in cursor.fetchall()
        ]


def ranked(*, period: str) -> bool:
    """Whether a refresh has ranked ``period`` yet: before the worker's first refresh there is
    no list to show, whatever was saved or traded."""
    return HotRanking.objects.filter(period=period).exists()


def hot_papers(
    *, period: str, category: str | None = None, limit: int = SHOWN
) -> list[tuple[Paper, Hot]]:
    """The ranking with its papers loaded: ``[(paper, Hot), …]``, best first."""
    from papers.models import Paper

    ranked = ranking(period=period, category=category, limit=limit)
    papers = Paper.objects.defer("search_vector").in_bulk([item.paper_id for item in ranked])
    return [(papers[item.paper_id], item) for item in ranked if item.paper_id in papers]
