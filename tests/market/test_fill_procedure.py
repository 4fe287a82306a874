"""The fill procedure, ``market_fill_orders`` (market/migrations/0012): a whole fill pass in one
call, each fill its own transaction, each fill an ordinary trade of the order's owner.

The behaviour of orders is tested through ``market.trading`` in test_orders.py and
test_order_concurrency.py. These tests hold the procedure's SQL helpers to the Python they
repeat, and cover what a pass in SQL does that a single fill does not: one trade crossing
several traders' orders, a trader's own trade filling their own order, the round trips a trade
and its fills cost, and the fee shard a first fill may lack.
"""

from __future__ import annotations

import random
import uuid

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from market import curve, trade_statements, trading
from market.ledger import check_ledger
from market.models import Account, Notice, Order, Term, Trade
from market.models.orders import describe, fill_key
from market.orders import reachable_shares
from market.units import format_credits, format_shares

pytestmark = pytest.mark.django_db(transaction=True)

CREDIT = 1_000_000
BIGINT = 2**63 - 1


def key() -> str:
    return uuid.uuid4().hex


def rows(sql: str, *arrays: list) -> list:
    """``sql`` applied to each row of the equal-length ``arrays``, in one query, in order."""
    with connection.cursor() as cursor:
        cursor.execute(sql, list(arrays))
        return [row[0] for row in cursor.fetchall()]


def order(user, term, side, shares, limit) -> Order:
    return trading.place_order(
        user=user, term=term, side=side, shares=shares, limit_price=limit, key=key()
    )


def set_cash(user, amount: int) -> None:
    account = Account.objects.get(user=user)
    trading.adjust_balance(account=account, amount=amount - trading.balance(user), reason="test")


@pytest.fixture
def term(db) -> Term:
    # The first share costs 1 credit and each one out adds 0.01.
    return Term.objects.create(phrase="KV cache", p0=CREDIT, k=10_000)


# The SQL helpers say what the Python says -----------------------------------------------------


def test_credits_and_shares_read_as_market_units_writes_them():
    amounts = [0, 1, 4_999, 5_000, 9_999, 10_000, 1_005_000, 1_234_567_890, 999_995_000]
    amounts += [-a for a in amounts] + [BIGINT, -BIGINT]
    amounts += random.Random(5).sample(range(-(10**15), 10**15), 200)
    got = rows(
        "SELECT market_format_credits(a) || '|' || market_format_credits(a, false) "
        "FROM unnest(%s::bigint[]) WITH ORDINALITY AS x(a, i) ORDER BY i",
        amounts,
    )
    assert got == [f"{format_credits(a)}|{format_credits(a, unit=False)}" for a in amounts]
    counts = [0, 1, 2, 999, 1_000, 1_234_567, BIGINT]
    got = rows(
        "SELECT market_format_shares(n) FROM unnest(%s::bigint[]) WITH ORDINALITY AS x(n, i) "
        "ORDER BY i",
        counts,
    )
    assert got == [format_shares(n) for n in counts]


def test_the_order_named_in_a_notice_reads_as_describe_writes_it(term):
    for side, shares, limit in [("buy", 1, 1_200_000), ("sell", 12_345, 999)]:
        o = Order(side=side, shares=shares, limit_price=limit)
        what = describe(o, "KV cache")
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT market_your_order(%s, %s, %s, %s)", [side, shares, limit, "KV cache"]
            )
            assert cursor.fetchone()[0] == f"Your order to {what[0].lower()}{what[1:]}"


def test_reachable_shares_in_sql_are_the_python_rule():
    cases = []
    for p0, k in [(1, 0), (5, 3), (1_000, 7), (CREDIT, 10_000)]:
        for supply in range(0, 40, 3):
            for limit in range(1, p0 + k * 45, max(1, (p0 + k * 45) // 37)):
                for side in ("buy", "sell"):
                    for remaining in (1, 7, 10**6):
                        cases.append((side, remaining, limit, supply, p0, k))
    columns = [list(column) for column in zip(*cases, strict=True)]
    got = rows(
        "SELECT market_order_reachable_shares(s, r, l, n, p, k) FROM unnest(%s::text[], "
        "%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[]) "
        "WITH ORDINALITY AS x(s, r, l, n, p, k, i) ORDER BY i",
        *columns,
    )
    expected = [
        reachable_shares(side=s, remaining=r, limit=lim, supply=n, p0=p, k=kk)
        for s, r, lim, n, p, kk in cases
    ]
    assert got == expected
    assert any(expected) and not all(expected)


def test_affordable_shares_are_what_the_cash_pays_for_fee_included():
    rng = random.Random(9)
    cases = [
        (
            rng.randint(0, 10**6),
            rng.choice([0, 1, rng.randint(0, 10**10), rng.randint(0, 10**13)]),
            rng.randint(1, 10_000),
            rng.randint(1, 10**7),
            rng.choice([0, rng.randint(1, 10**5)]),
            rng.choice([0, 100, 10_000]),
        )
        for _ in range(400)
    ]
    columns = [list(column) for column in zip(*cases, strict=True)]
    got = rows(
        "SELECT market_affordable_shares(n, c, w, p, k, b) FROM unnest(%s::bigint[], "
        "%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[], %s::integer[]) "
        "WITH ORDINALITY AS x(n, c, w, p, k, b, i) ORDER BY i",
        *columns,
    )
    expected = [
        min(w, curve.shares_for_total(n, c, p0=p, k=k, basis_points=b))
        for n, c, w, p, k, b in cases
    ]
    assert got == expected
    assert any(0 < e < w for e, (_, _, w, *_) in zip(expected, cases, strict=True))


# One trade, several orders, one pass ----------------------------------------------------------


def test_one_sale_fills_several_traders_orders_in_priority_in_one_pass(
    django_user_model, trader, rival, reader, term
):
    maya = django_user_model.objects.create_user("maya")
    buy = trading.buy(user=rival, term=term, shares=50, max_cost=None, key=key())
    assert buy.price_after == 1_500_000
    first = order(trader, term, "buy", 5, 1_400_000)
    best = order(reader, term, "buy", 5, 1_450_000)
    later = order(maya, term, "buy", 5, 1_400_000)
    sold = trading.sell(user=rival, term=term, shares=30, min_proceeds=None, key=key())
    assert sold.price_after == 1_200_000  # all three are in reach

    bp = settings.MARKET_FEE_BASIS_POINTS
    supply = 20
    for placed, owner in [(best, reader), (first, trader), (later, maya)]:
        after = Order.objects.get(pk=placed.pk)
        assert (after.state, after.filled, after.fills) == ("filled", 5, 1)
        fill = after.fill_rows.select_related("trade").get()
        trade = fill.trade
        assert fill.triggered_at == sold.created_at
        assert (trade.account.user, trade.side, trade.key) == (owner, "buy", fill_key(after.pk, 1))
        # Each fill starts where the one before it left the price.
        assert (trade.supply_before, trade.shares) == (supply, 5)
        amount = curve.cost(supply, 5, p0=CREDIT, k=10_000)
        fee = curve.fee(amount, basis_points=bp)
        assert (trade.amount, trade.fee) == (amount, fee)
        what = describe(after, "KV cache")
        assert Notice.objects.get(order=after).text == (
            f"Your order to {what[0].lower()}{what[1:]} bought 5 shares for "
            f"{format_credits(amount)}, plus a fee of {format_credits(fee)}, and is filled."
        )
        supply += 5
    versions = [
        Order.objects.get(pk=o.pk).fill_rows.get().trade.term_version for o in (best, first, later)
    ]
    assert versions == [sold.term_version + 1, sold.term_version + 2, sold.term_version + 3]
    assert check_ledger().ok


def test_a_trade_and_the_fills_it_allows_cost_two_statements(
    monkeypatch, trader, rival, reader, term
):
    buy = trading.buy(user=rival, term=term, shares=50, max_cost=None, key=key())
    assert buy.price_after == 1_500_000
    order(trader, term, "buy", 5, 1_400_000)
    order(reader, term, "buy", 5, 1_300_000)
    calls: list[str] = []
    prepared = trade_statements.prepared_row

    def counted(sql, params, **kwargs):
        calls.append(sql.split("(")[0])
        return prepared(sql, params, **kwargs)

    monkeypatch.setattr(trade_statements, "prepared_row", counted)
    with CaptureQueriesContext(connection) as queries:
        trading.sell(user=rival, term=term, shares=30, min_proceeds=None, key=key())
    assert calls == ["SELECT * FROM market_place_trade", "CALL market_fill_orders"]
    assert [q["sql"] for q in queries if "market_" in q["sql"]] == []
    assert Order.objects.filter(state="filled").count() == 2


# A trader's own orders ------------------------------------------------------------------------


def test_a_traders_own_buy_fills_their_own_sell_order_at_a_cost_never_a_gain(trader, term):
    start = trading.balance(trader)
    trading.buy(user=trader, term=term, shares=10, max_cost=None, key=key())  # price 1.10
    waiting = order(trader, term, "sell", 5, 1_250_000)
    assert waiting.filled == 0
    bought = trading.buy(user=trader, term=term, shares=20, max_cost=None, key=key())
    assert bought.price_after == 1_300_000
    after = Order.objects.get(pk=waiting.pk)
    [fill] = [f.trade for f in after.fill_rows.select_related("trade")]
    # Shares 30 … 26 sold at 1.29 … 1.25, each at least the limit.
    assert (after.state, fill.shares, fill.price_after) == ("filled", 5, 1_250_000)
    assert fill.account.user == trader
    assert trading.holding(trader, term) == 25
    # Buying the 25 shares directly would have cost less: the self-fill paid fees both ways.
    direct = curve.cost(0, 25, p0=CREDIT, k=10_000)
    direct += curve.fee(direct, basis_points=settings.MARKET_FEE_BASIS_POINTS)
    assert start - trading.balance(trader) > direct
    assert check_ledger().ok


def test_a_traders_own_sale_reaching_their_buy_order_spends_only_the_cash_they_have(trader, term):
    trading.buy(user=trader, term=term, shares=5, max_cost=None, key=key())  # price 1.05
    waiting = order(trader, term, "buy", 20, 1_040_000)
    assert waiting.filled == 0
    # The sale brings back what buying the five shares again costs, less two fees.
    set_cash(trader, 50_000)
    sold = trading.sell(user=trader, term=term, shares=5, min_proceeds=None, key=key())
    cash_then = 50_000 + sold.total
    after = Order.objects.get(pk=waiting.pk)
    bp = settings.MARKET_FEE_BASIS_POINTS
    can = curve.shares_for_total(0, cash_then, p0=CREDIT, k=10_000, basis_points=bp)
    assert 0 < can < 5  # the limit reaches 5 shares (1.00 … 1.04); the cash pays for fewer
    assert (after.state, after.filled) == ("cancelled", can)
    paid = curve.cost(0, can, p0=CREDIT, k=10_000)
    paid += curve.fee(paid, basis_points=bp)
    next_share = CREDIT + 10_000 * can
    assert after.reason == (
        f"Not enough cash: the next share cost "
        f"{format_credits(next_share + curve.fee(next_share, basis_points=bp))} with the fee, "
        f"and you had {format_credits(cash_then - paid)}."
    )
    assert trading.balance(trader) == cash_then - paid >= 0
    assert check_ledger().ok


# The fee shard --------------------------------------------------------------------------------


def test_a_first_fill_on_a_shard_without_its_fee_row_creates_it_and_fills(trader, term):
    shard = term.pk % Account.FEE_SHARDS
    Account.objects.filter(kind=Account.Kind.FEES, shard=shard).delete()
    placed = order(trader, term, "buy", 3, 1_020_000)  # within reach at once
    assert Order.objects.get(pk=placed.pk).filled == 3
    fees = Account.objects.get(kind=Account.Kind.FEES, shard=shard)
    assert fees.cash == Trade.objects.get(order_fill__order=placed).fee > 0
    assert check_ledger().ok
