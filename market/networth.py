"""Net worth over time: the daily snapshot of every account, the net-worth series of one
account, and the leaderboards for this week, this month and all time.

A snapshot dated D is the account's worth when the day's task ran (at the end of D, UTC):
cash, shares at sell-back value (after the fee), and what it had been given so far. A period's
gain is ``(net worth − given) now − (net worth − given) at the period's start``, where the start
is the latest snapshot dated before the period's first day. Subtracting what was given keeps an
admin's adjustment in the period from counting as a gain.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import Case, F, OuterRef, QuerySet, Subquery, Value, When, Window
from django.db.models.functions import Coalesce, Rank
from django.utils import timezone

from . import curve
from .models import Account, NetWorthSnapshot
from .stats import AccountFigures, leaderboard, scored_accounts, valued_accounts

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

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


# Leaderboards ---------------------------------------------------------------------------------

PERIODS = {"week": "This week", "month": "This month", "all": "All time"}


def period_start(period: str, *, today: dt.date) -> dt.date | None:
    """The first day of ``period`` ("week" starts on Monday), or None for all time."""
    if period == "week":
        return today - dt.timedelta(days=today.weekday())
    if period == "month":
        return today.replace(day=1)
    return None


class PeriodGain(AccountFigures):
    gain: int  # µ¢ over the period


class RankedPeriodGain(PeriodGain):
    rank: int


def period_leaderboard(
    *, period: str, today: dt.date
) -> QuerySet[WithAnnotations[Account, RankedPeriodGain]]:
    """Traders ranked by their gain over ``period`` ("week", "month" or "all"), best first.

    Rows carry the annotations of ``stats.scored_accounts`` plus ``gain`` (over the period, µ¢)
    and ``rank`` (ties share one). All time is the plain leaderboard: net worth minus grants.

    The baseline is the latest snapshot dated before the period's first day. A trader without
    one who joined during the period started from nothing gained (baseline 0); one who joined
    before but has no snapshot that old (snapshots began later) is measured from their first
    snapshot in the period.
    """
    start = period_start(period, today=today)
    if start is None:
        return leaderboard().annotate(gain=F("score"))
    return (
        _period_gains(start)
        .select_related("user")
        .annotate(rank=Window(Rank(), order_by=F("gain").desc()))
        .order_by("-gain", "user__username", "pk")
    )


def _period_gains(start: dt.date) -> QuerySet[WithAnnotations[Account, PeriodGain]]:
    snapshots = NetWorthSnapshot.objects.filter(account=OuterRef("pk")).annotate(
        snapshot_gain=_big(F("net_worth") - F("granted"))
    )
    before = snapshots.filter(date__lt=start).order_by("-date").values("snapshot_gain")[:1]
    first_in_period = snapshots.filter(date__gte=start).order_by("date").values("snapshot_gain")
    start_of_day = dt.datetime.combine(start, dt.time(0), tzinfo=dt.UTC)
    baseline = Coalesce(
        Subquery(before, output_field=_BIG),
        Case(
            When(created_at__gte=start_of_day, then=Value(0)),
            default=Subquery(first_in_period[:1], output_field=_BIG),
            output_field=_BIG,
        ),
        Value(0),
    )
    return (
        scored_accounts()
        .annotate(baseline=baseline)
        .annotate(gain=_big(F("score") - F("baseline")))
    )


@dataclass(frozen=True, slots=True)
class PeriodStanding:
    rank: int
    of: int
    gain: int  # µ¢ over the period
    net_worth: int


def period_standing(*, user, period: str, today: dt.date) -> PeriodStanding | None:
    """The user's place on a period's leaderboard, or None before their first trade."""
    start = period_start(period, today=today)
    ranked: QuerySet[WithAnnotations[Account, PeriodGain]] = (
        scored_accounts().annotate(gain=F("score")) if start is None else _period_gains(start)
    )
    mine = ranked.filter(user=user).values_list("gain", "net_worth").first()
    if mine is None:
        return None
    better = ranked.filter(gain__gt=mine[0]).count()
    return PeriodStanding(rank=better + 1, of=ranked.count(), gain=mine[0], net_worth=mine[1])


def period_from(value: str | None) -> str:
    return value if value in PERIODS else "all"


def today_utc() -> dt.date:
    return timezone.now().astimezone(dt.UTC).date()
