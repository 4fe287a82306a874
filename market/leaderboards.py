"""The leaderboards: traders ranked by what they gained, all time and over this week or month.

A trader's score is net worth (cash plus shares at sell-back value, after the fee) minus what
they were given (starting grant and adjustments). A period's gain is ``(net worth − given) now −
(net worth − given) at the period's start``, where the start is the latest daily snapshot
(``market.networth``) dated before the period's first day. Subtracting what was given keeps an
admin's adjustment in the period from counting as a gain.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from django.conf import settings
from django.db.models import (
    Case,
    Exists,
    F,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
    When,
    Window,
)
from django.db.models.functions import Coalesce, Rank

from . import curve
from .models import Account, Entry, Holding, NetWorthSnapshot, Trade
from .stats import GIVEN_KINDS

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

_big = curve.big
_BIG = curve.BIG_INTEGER


# What the querysets below annotate their rows with (µ¢), for mypy.
class AccountFigures(TypedDict):
    holdings_value: int
    granted: int
    net_worth: int
    score: int


class RankedAccountFigures(AccountFigures):
    rank: int


# All time ----------------------------------------------------------------------------------------


def _sell_back_sql():
    """SQL for ``sell_back_value`` of a Holding row: curve proceeds minus the fee."""
    amount = curve.proceeds_sql(
        n=F("term__supply"), d=F("shares"), p0=F("term__p0"), k=F("term__k")
    )
    return _big(amount - curve.fee_sql(amount, basis_points=settings.MARKET_FEE_BASIS_POINTS))


def valued_accounts() -> QuerySet[WithAnnotations[Account, AccountFigures]]:
    """Every user's account, annotated with ``holdings_value`` (sell-back value of all
    holdings), ``net_worth`` (cash plus that), ``granted`` (starting grant and adjustments) and
    ``score`` (net worth minus granted). One statement, so the figures are of one instant."""
    holdings_value = (
        Holding.objects.filter(account=OuterRef("pk"), shares__gt=0)
        .order_by()
        .values("account")
        .annotate(total=Sum(_sell_back_sql()))
        .values("total")
    )
    granted = (
        Entry.objects.filter(
            account=OuterRef("pk"),
            asset=Entry.Asset.CASH,
            transaction__kind__in=GIVEN_KINDS,
        )
        .order_by()
        .values("account")
        .annotate(total=Sum("amount"))
        .values("total")
    )
    return Account.objects.users().annotate(
        holdings_value=Coalesce(Subquery(holdings_value, output_field=_BIG), Value(0)),
        granted=Coalesce(Subquery(granted, output_field=_BIG), Value(0)),
        net_worth=_big(F("cash") + F("holdings_value")),
        score=_big(F("net_worth") - F("granted")),
    )


def scored_accounts() -> QuerySet[WithAnnotations[Account, AccountFigures]]:
    """Traders' accounts (active users with at least one trade), annotated as by
    ``valued_accounts``."""
    return (
        valued_accounts()
        .filter(user__is_active=True)
        .filter(Exists(Trade.objects.filter(account=OuterRef("pk"))))
    )


def leaderboard() -> QuerySet[WithAnnotations[Account, RankedAccountFigures]]:
    """Traders ranked by score, best first; ties share a rank. Rows carry ``rank``."""
    return (
        scored_accounts()
        .select_related("user")
        .annotate(rank=Window(Rank(), order_by=F("score").desc()))
        .order_by("-score", "user__username", "pk")
    )


@dataclass(frozen=True, slots=True)
class Standing:
    rank: int
    of: int
    account: Account  # annotated as by scored_accounts()


def standing(*, user) -> Standing | None:
    """The user's place on the leaderboard, or None before their first trade. Three queries."""
    mine = scored_accounts().filter(user=user).first()
    if mine is None:
        return None
    ranked = scored_accounts()
    better = ranked.filter(score__gt=mine.score).count()
    return Standing(rank=better + 1, of=ranked.count(), account=mine)


# This week, this month ---------------------------------------------------------------------------

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

    Rows carry the annotations of ``scored_accounts`` plus ``gain`` (over the period, µ¢)
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
