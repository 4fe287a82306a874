"""The Postgres trade function, ``market_place_trade``: it writes what market.trading says.

The behaviour of trades is tested through ``market.trading`` in test_trading.py. These tests
hold the SQL to the Python it repeats: the curve and the fee, the trade it reports against the
rows it wrote, and the system rows it relies on.
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.forms.models import model_to_dict
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from market import curve, trading
from market.ledger import check_ledger
from market.models import Account, Term, Trade

BIGINT = 2**63 - 1


def sql(expression: str, *params: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {expression}", params)
        return cursor.fetchone()[0]


class CurveInSQL(TestCase):
    @settings(max_examples=300, deadline=None)
    @given(
        n=st.integers(0, 10**7),
        d=st.integers(1, 10**4),
        p0=st.integers(1, 10**9),
        k=st.integers(0, 10**7),
    )
    def test_cost_matches_the_python_curve(self, n, d, p0, k):
        expected = curve.cost(n, d, p0=p0, k=k)
        self.assertEqual(sql("market_curve_cost(%s, %s, %s, %s)", n, d, p0, k), expected)

    @settings(max_examples=300, deadline=None)
    @given(amount=st.integers(0, BIGINT // 10_000), basis_points=st.integers(0, 10_000))
    def test_fee_matches_the_python_fee(self, amount, basis_points):
        expected = curve.fee(amount, basis_points=basis_points)
        self.assertEqual(sql("market_fee(%s, %s)", amount, basis_points), expected)


@pytest.mark.parametrize("side", ["buy", "sell"])
def test_the_trade_returned_is_the_row_written(trader, kv_cache, side):
    trading.buy(user=trader, term=kv_cache, shares=7, max_cost=None, key="setup")
    if side == "buy":
        trade = trading.buy(user=trader, term=kv_cache, shares=4, max_cost=None, key="t")
    else:
        trade = trading.sell(user=trader, term=kv_cache, shares=4, min_proceeds=None, key="t")
    stored = Trade.objects.get(pk=trade.pk)
    assert model_to_dict(trade) == model_to_dict(stored)
    assert trade.created_at == stored.created_at
    assert trade.transaction_id == stored.transaction_id
    kv_cache.refresh_from_db()
    returned = trade.term
    assert (returned.supply, returned.reserve, returned.version) == (
        kv_cache.supply,
        kv_cache.reserve,
        kv_cache.version,
    )


def test_a_missing_fee_shard_is_created_by_the_first_trade_that_needs_it(trader, kv_cache):
    # Shards are created by a migration; a flushed database (or a new shard count) lacks them.
    shard = kv_cache.pk % Account.FEE_SHARDS
    Account.objects.filter(kind=Account.Kind.FEES, shard=shard).delete()
    trade = trading.buy(user=trader, term=kv_cache, shares=3, max_cost=None, key="k")
    assert Account.objects.get(kind=Account.Kind.FEES, shard=shard).cash == trade.fee > 0
    assert check_ledger().ok


def test_a_huge_limit_means_no_limit_for_a_buyer_and_refuses_a_seller(trader, kv_cache, snapshot):
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=10**30, key="a")
    state = snapshot()
    with pytest.raises(trading.Slippage, match="below your minimum"):
        trading.sell(user=trader, term=kv_cache, shares=1, min_proceeds=10**30, key="b")
    assert snapshot() == state


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_each_trade_commits_on_its_own(trader, kv_cache):
    assert not connection.in_atomic_block
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="one")
    with pytest.raises(trading.InsufficientShares):
        trading.sell(user=trader, term=kv_cache, shares=5, min_proceeds=None, key="two")
    # The refusal rolled back only its own call: the first trade stands, and the connection
    # is usable (not left inside a failed transaction).
    assert Term.objects.get(pk=kv_cache.pk).supply == 2
    assert trading.holding(trader, kv_cache) == 2
    assert check_ledger().ok
