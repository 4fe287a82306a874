"""The listing day the dividend tests pay, and its papers: Wednesday 25 November 2026's
listing, announced Tuesday 24 at 20:00 New York; its submission period ran from Monday 23
14:00 to Tuesday 24 14:00. Times are written as New York's, as arXiv's schedule is."""

from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from market.models import Term
from papers.models import Category, Paper
from tests.factories import list_paper, make_paper

NY = ZoneInfo("America/New_York")
DIVIDEND = 10_000
DAY = dt.date(2026, 11, 25)
SUBMITTED = "2026-11-23 16:00"  # inside DAY's submission period


def ny(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text).replace(tzinfo=NY)


def listed_early(term: Term) -> Term:
    """``term``, listed on 1 November: long before any trade the tests date."""
    Term.objects.filter(pk=term.pk).update(listed_at=ny("2026-11-01 09:00"))
    return Term.objects.get(pk=term.pk)


def paper_of_the_day(
    category: Category, *, submitted: str | None = SUBMITTED, **fields: Any
) -> Paper:
    """A paper mentioning the KV cache (``fields``: ``make_paper``'s), listed in ``category``
    on DAY, submitted at ``submitted`` (None: without a submission time, as a feed gives it)."""
    made = make_paper(**{"title": "Paging the KV cache", "abstract": "We page it.", **fields})
    if submitted is not None:
        Paper.objects.filter(pk=made.pk).update(submitted_at=ny(submitted))
    list_paper(made, category=category, date=DAY)
    return made
