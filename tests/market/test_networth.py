"""Daily net-worth snapshots, the portfolio's net-worth chart, and the leaderboards for this
week, this month and all time."""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings

from market import leaderboards, networth, tasks
from market.models import NetWorthSnapshot
from tests.factories import buy, username
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db

GRANT = 1_000_000_000
# Ten KV cache shares (p0 1 credit, k 0.01): cost 10.45 credits, fee 0.1045; selling them back
# brings 10.45 less the fee. Ten Raft shares (p0 2, k 0.05): 22.25, fee 0.2225.
KV_TEN_CASH = GRANT - 10_450_000 - 104_500
KV_TEN_WORTH = KV_TEN_CASH + 10_450_000 - 104_500  # 999.791 credits
RAFT_TEN_WORTH = GRANT - 22_250_000 - 222_500 + 22_250_000 - 222_500  # 999.555 credits

WEDNESDAY = dt.date(2026, 11, 25)  # its week starts Monday 23 November


def snapshot(user, date: dt.date, *, net_worth: int, granted: int = GRANT) -> NetWorthSnapshot:
    made = NetWorthSnapshot.objects.create(
        account=user.market_account,
        date=date,
        cash=net_worth,
        holdings_value=0,
        net_worth=net_worth,
        granted=granted,
    )
    return made


def test_snapshot_values_are_exact(trader, rival, reader, kv_cache, raft):
    buy(trader, kv_cache, 10)
    buy(rival, raft, 10)
    reader.market_account  # noqa: B018 - opened by the signal: a user who never traded

    assert networth.take_snapshots(date=WEDNESDAY) == 3
    mine = NetWorthSnapshot.objects.get(account__user=trader, date=WEDNESDAY)
    assert (mine.cash, mine.holdings_value, mine.net_worth, mine.granted) == (
        KV_TEN_CASH,
        10_450_000 - 104_500,
        KV_TEN_WORTH,
        GRANT,
    )
    assert mine.gain == -209_000
    assert NetWorthSnapshot.objects.get(account__user=rival).net_worth == RAFT_TEN_WORTH
    idle = NetWorthSnapshot.objects.get(account__user=reader)
    assert (idle.cash, idle.holdings_value, idle.net_worth) == (GRANT, 0, GRANT)


def test_a_day_is_snapshotted_once_however_often_the_task_runs(trader, kv_cache):
    buy(trader, kv_cache, 10)
    assert tasks.snapshot_net_worth.delay(WEDNESDAY.isoformat()).get() == 1
    buy(trader, kv_cache, 5)  # a later run the same day keeps the first figure
    assert tasks.snapshot_net_worth.delay(WEDNESDAY.isoformat()).get() == 0
    assert list(NetWorthSnapshot.objects.values_list("date", "net_worth")) == [
        (WEDNESDAY, KV_TEN_WORTH)
    ]


def test_the_task_dates_its_snapshot_the_day_that_just_closed(trader):
    tasks.snapshot_net_worth.delay().get()
    yesterday = networth.today_utc() - dt.timedelta(days=1)
    assert NetWorthSnapshot.objects.get(account__user=trader).date == yesterday


def test_beat_takes_the_snapshot_every_day():
    entry = settings.CELERY_BEAT_SCHEDULE["snapshot-net-worth"]
    assert entry["task"] == tasks.snapshot_net_worth.name
    assert entry["schedule"].day_of_week == set(range(7))


def leaders(period: str, today: dt.date = WEDNESDAY) -> list[tuple[str, int, int]]:
    return [
        (username(account), account.rank, account.gain)
        for account in leaderboards.period_leaderboard(period=period, today=today)
    ]


@pytest.fixture
def two_traders(trader, rival, kv_cache, raft):
    """tobias is 0.209 credits down on all time, rhea 0.445. Last week rhea ended a credit
    down and tobias even; last month tobias ended 1.5 credits down and rhea even."""
    buy(trader, kv_cache, 10)
    buy(rival, raft, 10)
    sunday, month_end = dt.date(2026, 11, 22), dt.date(2026, 10, 31)
    snapshot(trader, sunday, net_worth=GRANT)
    snapshot(rival, sunday, net_worth=GRANT - 1_000_000)
    snapshot(trader, month_end, net_worth=GRANT - 1_500_000)
    snapshot(rival, month_end, net_worth=GRANT)
    # Inside the periods: not a baseline while an earlier snapshot exists.
    snapshot(trader, dt.date(2026, 11, 24), net_worth=GRANT - 9_000_000)
    return trader, rival


def test_all_time_ranks_net_worth_minus_grants(two_traders):
    assert leaders("all") == [("tobias", 1, -209_000), ("rhea", 2, -445_000)]


def test_this_week_ranks_the_gain_since_the_end_of_last_week(two_traders):
    assert leaders("week") == [("rhea", 1, -445_000 + 1_000_000), ("tobias", 2, -209_000)]


def test_this_month_ranks_the_gain_since_the_end_of_last_month(two_traders):
    assert leaders("month") == [("tobias", 1, -209_000 + 1_500_000), ("rhea", 2, -445_000)]


def test_money_given_during_a_period_is_not_a_gain(trader, kv_cache):
    buy(trader, kv_cache, 10)
    # Last week: 990 credits of a 1,000 grant. Since then an admin added 50 credits.
    snapshot(trader, dt.date(2026, 11, 22), net_worth=990_000_000)
    from market.cash import adjust_balance

    adjust_balance(account=trader.market_account, amount=50_000_000, reason="Prize")
    [(name, _, gain)] = leaders("week")
    assert gain == (KV_TEN_WORTH + 50_000_000 - GRANT - 50_000_000) - (990_000_000 - GRANT)


def test_a_trader_who_joined_during_the_period_is_measured_from_nothing(trader, kv_cache):
    buy(trader, kv_cache, 10)
    # No snapshot before the period, and the account is newer than its start.
    today = networth.today_utc()
    assert leaders("week", today) == [("tobias", 1, -209_000)]


def test_leaderboard_page_switches_period(client, trader, rival, kv_cache, raft):
    buy(trader, kv_cache, 10)
    buy(rival, raft, 10)
    # The page measures from the real today: baselines at the end of last week.
    today = networth.today_utc()
    before_week = today - dt.timedelta(days=today.weekday() + 1)
    snapshot(rival, before_week, net_worth=GRANT - 1_000_000)
    snapshot(trader, before_week, net_worth=GRANT)

    response = client.get("/leaderboard/?period=week")
    assert response.status_code == 200
    week = Page.of(response)
    assert "Gain this week" in week.text
    assert week.row("1")[1:] == ["rhea", "+0.56", "999.56", "977.53", "22.03"]
    assert "This week" in week.texts("a", href="/leaderboard/?period=week", aria_current="page")
    all_time = Page.of(client.get("/leaderboard/"))
    assert all_time.row("1")[1] == "tobias"
    assert all_time.row("1")[2] == "−0.21"
    assert client.get("/leaderboard/?period=decade").status_code == 200  # falls back to all


def test_portfolio_charts_net_worth_by_day(client, trader, kv_cache):
    buy(trader, kv_cache, 10)
    client.force_login(trader)
    first = page_text(client.get("/portfolio/"))
    assert "Your chart starts after the first daily snapshot" in first

    today = networth.today_utc()
    snapshot(trader, today - dt.timedelta(days=2), net_worth=GRANT)
    snapshot(trader, today - dt.timedelta(days=1), net_worth=999_500_000)
    chart = Page.of(client.get("/portfolio/")).one("svg", cls="trend-chart")
    start = today - dt.timedelta(days=2)
    assert chart.one("desc").text == (
        f"From 1,000.00 credits on {start.day} {start:%b %Y} to 999.79 credits on "
        f"{today.day} {today:%b %Y}; lowest 999.50 credits, highest 1,000.00 credits."
    )
    assert len(chart.select(cls="trend-chart__dot")) == 3
