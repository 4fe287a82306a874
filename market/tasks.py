"""Celery tasks: they take primary keys and plain values and call the domain functions."""

from __future__ import annotations

import datetime as dt
import logging

from celery import shared_task

from papers.models import Category
from peerrevenue.retries import database_task

from .dividends import pay_dividends_for_day
from .ledger import check_ledger as run_ledger_check
from .networth import take_snapshots, today_utc
from .notices import tell_moves

# ``fill_orders`` (the rest of a fill pass) is defined beside the pass in market/orders.py,
# which queues it; named here so the worker, which imports this module, registers it.
from .orders import fill_orders as fill_orders
from .orders import sweep

logger = logging.getLogger(__name__)


@database_task("market.tasks.pay_dividends")
def pay_dividends(category_id: int, date_iso: str) -> dict:
    """Pay the dividends for one category's ingested day; safe to run again."""
    category = Category.objects.get(pk=category_id)
    summary = pay_dividends_for_day(category=category, date=dt.date.fromisoformat(date_iso))
    logger.info("Dividends for %s %s: %s", category.code, date_iso, summary.as_dict())
    return summary.as_dict()


@shared_task(name="market.tasks.check_ledger")
def check_ledger() -> bool:
    """Periodic audit of the books; logs an error (for alerting) on any violation."""
    report = run_ledger_check()
    if report.ok:
        logger.info("%s", report.text())
    else:
        logger.error("%s", report.text())
    return report.ok


@database_task("market.tasks.snapshot_net_worth")
def snapshot_net_worth(date_iso: str | None = None) -> int:
    """Record every account's net worth for a day; safe to run again.

    Beat runs it just after the UTC day closed, so by default it is dated the day before.
    """
    date = dt.date.fromisoformat(date_iso) if date_iso else today_utc() - dt.timedelta(days=1)
    taken = take_snapshots(date=date)
    logger.info("Net-worth snapshots for %s: %d new", date.isoformat(), taken)
    return taken


@shared_task(name="market.tasks.keep_highlights")
def keep_highlights() -> int:
    """Highlight the newest papers for the current term set ahead of their readers."""
    from .highlighted_html import keep_recent_highlights

    return keep_recent_highlights()


@shared_task(name="market.tasks.sweep_orders")
def sweep_orders() -> int:
    """Expire due orders and fill reachable ones on every term (the safety net)."""
    return sweep()


@shared_task(name="market.tasks.notify_follow_moves")
def notify_follow_moves() -> int:
    """Tell followers of the terms that moved past their threshold."""
    return tell_moves()


# A recount's share of a task's time limit: the months left over go to the next task.
RESEARCH_SECONDS = 100


@shared_task(name="market.tasks.recount_research")
def recount_research(months: list[str] | None = None) -> int:
    """Recount term research for these months (ISO dates; None: all), as many as fit in
    RESEARCH_SECONDS; the rest are queued again. Returns how many were counted here."""
    import time

    from . import research

    left = [dt.date.fromisoformat(m) for m in months] if months is not None else None
    left = sorted(left) if left is not None else research.all_months()
    started = time.monotonic()
    done = 0
    while left and time.monotonic() - started < RESEARCH_SECONDS:
        research.recount(months=[left.pop(0)])
        done += 1
    if left:
        recount_research.delay([month.isoformat() for month in left])
    return done
