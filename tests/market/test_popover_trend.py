"""The popover's day change is coloured by the figure it shows: a change in basis points is
judged as a percentage (a tenth of a percent is the least it shows), not as money."""

from __future__ import annotations

import uuid

import pytest

from market import trading
from market.models import Term

pytestmark = pytest.mark.django_db


@pytest.fixture
def risen(rival) -> Term:
    term = Term.objects.create(phrase="KV cache", p0=1_000_000, k=10_000)
    trading.buy(user=rival, term=term, shares=40, max_cost=None, key=uuid.uuid4().hex)
    return term


@pytest.fixture
def barely_moved(rival) -> Term:
    # 1 share on a deep curve: the price moves by less than a twentieth of a percent.
    term = Term.objects.create(phrase="Raft", p0=1_000_000, k=10)
    trading.buy(user=rival, term=term, shares=1, max_cost=None, key=uuid.uuid4().hex)
    return term


def test_a_rise_of_a_third_is_up_in_the_hover_prices_and_the_popover(
    client, trader, risen, barely_moved
):
    terms = client.get("/market/tickers.json").json()["terms"]
    assert terms["kv-cache"]["change"] == "+40.0% today"
    assert terms["kv-cache"]["trend"] == "up"
    # What rounds to +0.0% reads flat, as it is written.
    assert terms["raft"]["change"] == "+0.0% today"
    assert terms["raft"]["trend"] == "flat"
    client.force_login(trader)
    offer = client.get("/market/kv-cache/offer.json?next=/list/cs.DC/").json()
    assert (offer["change"], offer["trend"]) == ("+40.0% today", "up")
    assert client.get("/market/raft/offer.json").json()["trend"] == "flat"
