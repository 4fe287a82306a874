"""The market's read side: figures computed in SQL agree with the curve and the ledger, and
cost a fixed number of queries."""

from __future__ import annotations

import datetime as dt
import itertools
from typing import TYPE_CHECKING

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from market import curve, dividends, leaderboards, stats, trading
from market.models import Entry, Term
from tests.factories import announce, buy, sell, username
from tests.market.state import held_before_the_announcement

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

pytestmark = pytest.mark.django_db

GRANT = 1_000_000_000


def bp_change(now: int, then: int) -> int:
    """Basis points truncated toward zero, as SQL integer division does."""
    value = abs(now - then) * 10_000 // then
    return value if now >= then else -value


def annotated(term: Term, **kwargs) -> WithAnnotations[Term, stats.MarketFigures]:
    return stats.market_terms(now=kwargs.pop("now", timezone.now()), **kwargs).get(pk=term.pk)


# The market table --------------------------------------------------------------------------


def test_prices_a_day_and_a_week_ago_come_from_the_trades_before_then(trader, kv_cache):
    now = timezone.now()
    buy(trader, kv_cache, 10, when=now - dt.timedelta(days=10))
    buy(trader, kv_cache, 10, when=now - dt.timedelta(days=3))
    buy(trader, kv_cache, 5, when=now - dt.timedelta(hours=2))

    row = annotated(kv_cache, now=now)
    price = lambda n: curve.price(n, p0=kv_cache.p0, k=kv_cache.k)  # noqa: E731
    assert (row.price_now, row.price_1d, row.price_7d) == (price(25), price(20), price(10))
    assert row.price_now == Term.objects.get(pk=kv_cache.pk).price
    assert row.change_1d_bp == bp_change(price(25), price(20)) == 416  # +4.16%
    assert row.change_7d_bp == bp_change(price(25), price(10)) == 1363


def test_a_falling_price_has_a_negative_change(trader, kv_cache):
    now = timezone.now()
    buy(trader, kv_cache, 50, when=now - dt.timedelta(days=2))
    sell(trader, kv_cache, 30, when=now - dt.timedelta(hours=1))
    row = annotated(kv_cache, now=now)
    then, now_price = kv_cache.p0 + 50 * kv_cache.k, kv_cache.p0 + 20 * kv_cache.k
    assert row.change_1d_bp == bp_change(now_price, then)
    assert row.change_1d_bp == -2000  # 1.20 from 1.50


def test_a_term_without_trades_has_no_change(kv_cache):
    row = annotated(kv_cache)
    assert row.price_now == row.price_1d == row.price_7d == kv_cache.p0
    assert row.change_1d_bp == row.change_7d_bp == 0


def test_a_term_first_traded_today_started_the_day_at_p0(trader, raft):
    buy(trader, raft, 4)
    row = annotated(raft)
    assert row.price_1d == raft.p0
    assert row.change_1d_bp == bp_change(raft.p0 + 4 * raft.k, raft.p0)


def test_holders_count_people_with_shares(trader, rival, reader, kv_cache):
    buy(trader, kv_cache, 3)
    buy(rival, kv_cache, 2)
    buy(reader, kv_cache, 1)
    sell(reader, kv_cache, 1)  # a holding row with zero shares is not a holder
    assert annotated(kv_cache).holder_count == 2


def test_mentions_count_the_last_seven_announcement_days(cs_dc, kv_cache, raft):
    days = [dt.date(2026, 10, 1) + dt.timedelta(days=i) for i in range(9)]
    for day in days[1:]:
        announce(None, date=day, category=cs_dc)
    announce(kv_cache, date=days[0], category=cs_dc)  # before the last seven days
    announce(kv_cache, date=days[1], category=cs_dc)  # the 8th most recent: too old
    announce(kv_cache, date=days[2], category=cs_dc)
    announce(kv_cache, date=days[8], category=cs_dc)
    announce(kv_cache, date=days[8], category=cs_dc)
    announce(kv_cache, date=days[8], category=cs_dc, hidden=True)
    assert annotated(kv_cache).recent_mentions == 3
    assert annotated(raft).recent_mentions == 0


def test_search_matches_phrases_and_aliases_case_insensitively(kv_cache, raft):
    store = Term.objects.create(phrase="key-value store", aliases=["KV store"])
    now = timezone.now()
    found = lambda q: {t.phrase for t in stats.market_terms(search=q, now=now)}  # noqa: E731
    assert found("kv") == {"KV cache", "key-value store"}
    assert found("KV ST") == {"key-value store"}
    assert found("raf") == {"Raft"}
    assert found("paxos") == set()
    assert store.pk


def test_halted_terms_are_on_the_market_and_delisted_ones_are_not(kv_cache, raft):
    Term.objects.filter(pk=kv_cache.pk).halt(reason="Under review")
    Term.objects.filter(pk=raft.pk).delist(reason="Merged into consensus")
    terms = list(stats.market_terms(now=timezone.now()))
    assert [(t.phrase, t.status) for t in terms] == [("KV cache", "halted")]


@pytest.mark.parametrize(
    ("sort", "descending", "expected"),
    [
        ("phrase", False, ["gossip", "KV cache", "Raft"]),
        ("phrase", True, ["Raft", "KV cache", "gossip"]),
        ("price", True, ["Raft", "KV cache", "gossip"]),
        ("price", False, ["gossip", "KV cache", "Raft"]),
        ("supply", True, ["KV cache", "Raft", "gossip"]),
        ("holders", True, ["KV cache", "Raft", "gossip"]),
        ("change", True, ["KV cache", "Raft", "gossip"]),
        ("mentions", True, ["Raft", "gossip", "KV cache"]),
    ],
)
def test_market_sorts(trader, rival, kv_cache, raft, cs_dc, sort, descending, expected):
    gossip = Term.objects.create(phrase="gossip", p0=500_000)
    buy(trader, kv_cache, 30)
    buy(rival, kv_cache, 30)
    buy(trader, raft, 2)
    announce(raft, date=dt.date(2026, 10, 1), category=cs_dc)
    announce(raft, date=dt.date(2026, 10, 1), category=cs_dc)
    announce(gossip, date=dt.date(2026, 10, 1), category=cs_dc)
    terms = stats.market_terms(sort=sort, descending=descending, now=timezone.now())
    assert [t.phrase for t in terms] == expected


def test_dividend_days_group_the_papers_of_a_day(trader, kv_cache, cs_dc):
    buy(trader, kv_cache, 4)
    day1, day2 = dt.date(2026, 10, 1), dt.date(2026, 10, 2)
    papers1 = [announce(kv_cache, date=day1, category=cs_dc) for _ in range(2)]
    papers2 = [announce(kv_cache, date=day2, category=cs_dc)]
    for day, papers in ((day1, papers1), (day2, papers2)):
        held_before_the_announcement(dt.date(2026, 10, 1))
        dividends.pay_dividend(
            term=kv_cache, paper_ids=[p.pk for p in papers], per_share=50_000, date=day
        )
    ids1 = tuple(sorted(p.arxiv_id for p in papers1))
    assert stats.dividend_days(term=kv_cache) == [
        stats.DividendDay(date=day1, papers=2, per_share=50_000, amount=400_000, arxiv_ids=ids1),
        stats.DividendDay(
            date=day2, papers=1, per_share=50_000, amount=200_000, arxiv_ids=(papers2[0].arxiv_id,)
        ),
    ]


# Portfolio ------------------------------------------------------------------------------------


def test_average_cost_basis():
    trades = [
        (1, "buy", 10, 1_000),
        (2, "buy", 3, 333),
        (1, "sell", 4, 999),  # what a sale fetched does not matter to the basis
        (1, "buy", 2, 500),
        (2, "sell", 3, 400),  # sold out: term 2 has no basis left
        (3, "buy", 1, 7),
        (3, "sell", 1, 8),
        (3, "buy", 2, 20),  # after selling out, a fresh start
    ]
    assert stats.average_cost_basis(trades) == {1: 600 + 500, 3: 20}


def test_sell_back_value_is_the_proceeds_of_selling_now_after_the_fee():
    amount = curve.proceeds(30, 10, p0=1_000_000, k=10_000)
    assert stats.sell_back_value(supply=30, shares=10, p0=1_000_000, k=10_000) == (
        amount - curve.fee(amount, basis_points=100)
    )


@pytest.fixture
def traded(trader, rival, kv_cache, raft, cs_dc):
    """Trader and rival trade two terms and collect a dividend."""
    t1 = buy(trader, kv_cache, 10)
    buy(rival, kv_cache, 5)
    sell(trader, kv_cache, 4)
    t4 = buy(trader, raft, 3)
    paper = announce(kv_cache, date=dt.date(2026, 10, 1), category=cs_dc)
    held_before_the_announcement(dt.date(2026, 10, 1))
    dividends.pay_dividend(
        term=kv_cache, paper_ids=[paper.pk], per_share=50_000, date=dt.date(2026, 10, 1)
    )
    return {"kv_buy": t1, "raft_buy": t4}


def test_portfolio_agrees_with_the_ledger(trader, kv_cache, raft, traded):
    summary = stats.portfolio(user=trader)
    kv, rf = Term.objects.get(pk=kv_cache.pk), Term.objects.get(pk=raft.pk)

    assert summary.cash == trading.balance(trader)
    assert summary.cash == sum(
        Entry.objects.filter(account__user=trader, asset="cash").values_list("amount", flat=True)
    )
    assert summary.granted == GRANT
    assert summary.dividends == 6 * 50_000
    by_term = {p.term.phrase: p for p in summary.positions}
    assert list(by_term) == ["KV cache", "Raft"]

    kv_pos = by_term["KV cache"]
    assert kv_pos.shares == trading.holding(trader, kv) == 6
    proceeds = curve.proceeds(kv.supply, 6, p0=kv.p0, k=kv.k)
    assert kv_pos.sell_back == proceeds - curve.fee(proceeds, basis_points=100)
    assert kv_pos.cost_basis == traded["kv_buy"].total * 6 // 10
    assert kv_pos.dividends == 300_000
    assert kv_pos.profit == kv_pos.sell_back - kv_pos.cost_basis

    raft_pos = by_term["Raft"]
    assert raft_pos.cost_basis == traded["raft_buy"].total
    assert raft_pos.sell_back == stats.sell_back_value(supply=3, shares=3, p0=rf.p0, k=rf.k)
    assert raft_pos.dividends == 0

    assert summary.net_worth == summary.cash + kv_pos.sell_back + raft_pos.sell_back
    assert summary.gain == summary.net_worth - GRANT


def test_portfolio_of_a_new_user_is_the_grant(reader):
    summary = stats.portfolio(user=reader)
    assert (summary.cash, summary.granted, summary.net_worth) == (GRANT, GRANT, GRANT)
    assert summary.gain == 0
    assert summary.positions == []


def test_portfolio_costs_the_same_queries_however_many_holdings(trader, django_user_model):
    terms = [Term.objects.create(phrase=f"word {n}") for n in range(8)]
    buy(trader, terms[0], 1)
    with CaptureQueriesContext(connection) as few:
        stats.portfolio(user=trader)
    for term in terms[1:]:
        buy(trader, term, 2)
        sell(trader, term, 1)
    with CaptureQueriesContext(connection) as many:
        summary = stats.portfolio(user=trader)
    assert len(summary.positions) == 8
    assert len(many) == len(few) <= 6


def test_account_history_is_every_cash_movement_with_a_running_balance(trader, kv_cache, traded):
    rows = list(stats.account_history(user=trader))
    kinds = [row.transaction.kind for row in rows]
    assert kinds == ["dividend", "trade", "trade", "trade", "grant"]
    assert rows[0].balance_after == trading.balance(trader)
    assert rows[-1].balance_after == rows[-1].amount == GRANT
    for newer, older in itertools.pairwise(rows):
        assert newer.balance_after == older.balance_after + newer.amount
    dividend = rows[0]
    assert (dividend.dividend_phrase, dividend.dividend_slug, dividend.dividend_papers) == (
        "KV cache",
        "kv-cache",
        1,
    )
    assert dividend.amount == 6 * 50_000
    assert rows[1].transaction.trade.term.phrase == "Raft"
    assert rows[1].amount == -rows[1].transaction.trade.total


# Leaderboard ----------------------------------------------------------------------------------


def test_leaderboard_score_is_net_worth_at_sell_back_minus_grants(trader, rival, traded):
    scores = {username(a): a for a in leaderboards.leaderboard()}
    for user in (trader, rival):
        summary = stats.portfolio(user=user)
        row = scores[user.username]
        assert row.holdings_value == summary.holdings_value
        assert row.net_worth == summary.net_worth
        assert row.granted == GRANT
        assert row.score == summary.gain


@pytest.mark.parametrize(
    ("p0", "k", "fee_bp"),
    [(1_000_000, 10_000, 100), (333_333, 7, 33), (5, 0, 1), (1_000_000, 10_000, 0)],
)
def test_sql_sell_back_value_matches_the_curve(settings, django_user_model, p0, k, fee_bp):
    settings.MARKET_FEE_BASIS_POINTS = fee_bp
    term = Term.objects.create(phrase=f"odd {p0} {k}", p0=p0, k=k)
    users = [django_user_model.objects.create_user(f"u{n}") for n in range(3)]
    for user, shares in zip(users, (7, 1, 13), strict=True):
        buy(user, term, shares)
    term.refresh_from_db()
    values = {a.user_id: a.holdings_value for a in leaderboards.scored_accounts()}
    for user, shares in zip(users, (7, 1, 13), strict=True):
        assert values[user.pk] == stats.sell_back_value(
            supply=term.supply, shares=shares, p0=p0, k=k
        )


def test_leaderboard_ranks_traders_only_and_ties_share_a_rank(
    trader, rival, reader, curator, django_user_model, kv_cache
):
    early, late = trader, rival
    buy(early, kv_cache, 20)
    buy(late, kv_cache, 20)
    twin_a = Term.objects.create(phrase="twin a")
    twin_b = Term.objects.create(phrase="twin b")
    buy(curator, twin_a, 5)
    gone = django_user_model.objects.create_user("gone")
    buy(gone, twin_b, 5)
    twin = django_user_model.objects.create_user("twin")
    buy(twin, Term.objects.create(phrase="twin c"), 5)
    gone.is_active = False
    gone.save()

    board = [(username(a), a.rank) for a in leaderboards.leaderboard()]
    # The early buyer gains what the late one lost (less fees); the two one-term traders tie.
    assert board == [("tobias", 1), ("cora", 2), ("twin", 2), ("rhea", 4)]
    assert "rosalind" not in dict(board)  # never traded
    assert leaderboards.standing(user=reader) is None
    mine = leaderboards.standing(user=rival)
    assert mine is not None and (mine.rank, mine.of) == (4, 4)
    twins = leaderboards.standing(user=twin)
    assert twins is not None and twins.rank == 2


def test_leaderboard_page_costs_the_same_queries_however_many_traders(django_user_model, kv_cache):
    def page_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            list(leaderboards.leaderboard()[:50])
            leaderboards.standing(user=first)
        return len(queries)

    first = django_user_model.objects.create_user("first")
    buy(first, kv_cache, 1)
    few = page_queries()
    for n in range(10):
        buy(django_user_model.objects.create_user(f"trader{n}"), kv_cache, n + 1)
    assert page_queries() == few == 4
