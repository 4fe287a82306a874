"""The bonding curve: exact integer prices, costs, proceeds, budgets and fees."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from market import curve

p0s = st.integers(min_value=1, max_value=10_000_000)
ks = st.integers(min_value=0, max_value=1_000_000)
supplies = st.integers(min_value=0, max_value=1_000_000)
quantities = st.integers(min_value=0, max_value=100_000)
bps = st.integers(min_value=0, max_value=5_000)


def brute_cost(n: int, d: int, p0: int, k: int) -> int:
    return sum(p0 + k * i for i in range(n, n + d))


def test_first_share_costs_p0_and_each_next_share_k_more():
    assert curve.price(0, p0=1_000_000, k=10_000) == 1_000_000
    assert curve.price(5, p0=1_000_000, k=10_000) == 1_050_000
    assert curve.cost(0, 1, p0=1_000_000, k=10_000) == 1_000_000
    assert curve.cost(0, 3, p0=1_000_000, k=10_000) == 1_000_000 + 1_010_000 + 1_020_000


def test_selling_returns_what_the_last_shares_cost():
    assert curve.proceeds(3, 1, p0=100, k=10) == 120
    assert curve.proceeds(3, 3, p0=100, k=10) == curve.cost(0, 3, p0=100, k=10)
    with pytest.raises(ValueError):
        curve.proceeds(2, 3, p0=100, k=10)


@pytest.mark.parametrize("bad", [1.0, "3", True, None])
def test_only_integers_enter_the_arithmetic(bad):
    with pytest.raises(TypeError):
        curve.cost(bad, 1, p0=100, k=1)
    with pytest.raises(TypeError):
        curve.cost(0, 1, p0=bad, k=1)


def test_fee_is_one_percent_rounded_up():
    assert curve.fee(100, basis_points=100) == 1
    assert curve.fee(101, basis_points=100) == 2
    assert curve.fee(1, basis_points=100) == 1
    assert curve.fee(0, basis_points=100) == 0
    assert curve.fee(1_000_000, basis_points=100) == 10_000


@given(
    n=st.integers(0, 500), d=st.integers(0, 200), p0=st.integers(1, 1000), k=st.integers(0, 1000)
)
def test_cost_is_the_sum_of_share_prices(n, d, p0, k):
    assert curve.cost(n, d, p0=p0, k=k) == brute_cost(n, d, p0, k)


@given(n=supplies, a=quantities, b=quantities, p0=p0s, k=ks)
def test_buying_in_two_steps_costs_the_same_as_in_one(n, a, b, p0, k):
    assert curve.cost(n, a, p0=p0, k=k) + curve.cost(n + a, b, p0=p0, k=k) == curve.cost(
        n, a + b, p0=p0, k=k
    )


@given(n=supplies, d=quantities, p0=p0s, k=ks, bp=bps)
def test_buy_then_sell_never_returns_more_than_it_cost(n, d, p0, k, bp):
    paid = curve.cost(n, d, p0=p0, k=k)
    paid += curve.fee(paid, basis_points=bp)
    back = curve.proceeds(n + d, d, p0=p0, k=k)
    back -= curve.fee(back, basis_points=bp)
    assert back <= paid


@given(supply=supplies, d=quantities, p0=p0s, k=ks)
def test_reserve_always_buys_every_share_back(supply, d, p0, k):
    assert curve.reserve(supply + d, p0=p0, k=k) - curve.cost(supply, d, p0=p0, k=k) == (
        curve.reserve(supply, p0=p0, k=k)
    )


@given(n=supplies, budget=st.integers(0, 10**13), p0=p0s, k=ks)
def test_shares_for_budget_is_the_most_the_budget_buys(n, budget, p0, k):
    d = curve.shares_for_budget(n, budget, p0=p0, k=k)
    assert curve.cost(n, d, p0=p0, k=k) <= budget
    assert curve.cost(n, d + 1, p0=p0, k=k) > budget


@given(total=st.integers(0, 10**13), bp=bps)
def test_amount_within_leaves_room_for_the_fee_and_no_more(total, bp):
    a = curve.amount_within(total, basis_points=bp)
    assert a + curve.fee(a, basis_points=bp) <= total
    assert a + 1 + curve.fee(a + 1, basis_points=bp) > total


@given(n=supplies, total=st.integers(0, 10**12), p0=p0s, k=ks, bp=bps)
def test_shares_for_total_includes_the_fee(n, total, p0, k, bp):
    d = curve.shares_for_total(n, total, p0=p0, k=k, basis_points=bp)

    def paid(shares: int) -> int:
        amount = curve.cost(n, shares, p0=p0, k=k)
        return amount + curve.fee(amount, basis_points=bp)

    assert paid(d) <= total < paid(d + 1)


@given(amount=st.integers(0, 10**15), bp=bps)
def test_fee_rounds_up_never_down(amount, bp):
    f = curve.fee(amount, basis_points=bp)
    assert f * 10_000 >= amount * bp
    assert (f - 1) * 10_000 < amount * bp or f == 0
