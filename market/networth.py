"""Net worth over time: the daily snapshot of every account and the net-worth series of one
account (the leaderboards over periods rank by the snapshots: ``market.leaderboards``).

A snapshot dated D is the account's worth when the day's task ran (at the end of D, UTC):
cash, shares at sell-back value (after the fee), and what it had been given so far.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.utils import timezone

from . import curve
from .leaderboards import valued_accounts
from .models import NetWorthSnapshot

if TYPE_CHECKING:
    pass

_big = curve.big
_BIG = curve.BIG_INTEGER


def take_snapshots(*, date: dt.date) -> int:
    """Record every user account's worth for ``date``; returns how many were new.

    Idempotent per day: the unique (account, date) constraint keeps the first snapshot of a day,
    so a retried or doubled beat run records nothing twice. The figures come from one SELECT,
    so every account is valued at the same instant (one MVCC snapshot), never half before and
    half after a trade.
    """
    rows = valued_accounts().values_list("pk", "cash", "holdings_value", "net_worth", "granted")
    snapshots = [
        NetWorthSnapshot(
            account_id=pk,
            date=date,
            cash=cash,
            holdings_value=holdings,
            net_worth=worth,
            granted=granted,
        )
        for pk, cash, holdings, worth, granted in rows
    ]
    before = NetWorthSnapshot.objects.filter(date=date).count()
    NetWorthSnapshot.objects.bulk_create(snapshots, ignore_conflicts=True, batch_size=2_000)
    return NetWorthSnapshot.objects.filter(date=date).count() - before


# One account over time ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WorthPoint:
    date: dt.date
    net_worth: int  # µ¢
    live: bool = False  # today's figure, computed now rather than snapshotted


def net_worth_series(*, user, today: dt.date, now: int | None) -> list[WorthPoint]:
    """The user's daily snapshots before ``today``, oldest first, then ``now`` (their net
    worth at this moment, µ¢, which the caller has from ``stats.portfolio``) dated today."""
    points = [
        WorthPoint(date, worth)
        for date, worth in NetWorthSnapshot.objects.filter(account__user=user, date__lt=today)
        .order_by("date")
        .values_list("date", "net_worth")
    ]
    if now is not None:
        points.append(WorthPoint(today, now, live=True))
    return points


def today_utc() -> dt.date:
    return timezone.now().astimezone(dt.UTC).date()
