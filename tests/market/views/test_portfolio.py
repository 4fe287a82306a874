"""A trader's portfolio: their figures, history, orders, and what it costs."""

from __future__ import annotations

import datetime as dt

import pytest

from market import dividends, stats, trading
from market.models import Term, Trade
from market.units import format_credits
from market.views import portfolio
from tests.factories import announce, buy, sell
from tests.html import Page, page_text
from tests.market.pages import GRANT, count_queries
from tests.market.state import held_before_the_announcement

pytestmark = pytest.mark.django_db


def test_portfolio_needs_a_login(client, db):
    response = client.get("/portfolio/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/portfolio/"


def test_a_new_user_lands_on_the_portfolio_with_the_starting_grant(client, db):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "email": "newbie@example.org",
            "password1": "a long enough passphrase 42",
            "password2": "a long enough passphrase 42",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/portfolio/"
    text = page_text(client.get("/portfolio/"))
    assert "Cash 1,000.00 credits" in text
    assert "Starting grant 1,000.00 credits" in text
    assert "No shares yet" in text and "You have 1,000.00 credits to spend." in text
    assert "Starting grant +1,000.00 1,000.00" in text  # the history's first line


def test_portfolio_figures_agree_with_the_ledger(
    trader_client, trader, rival, kv_cache, raft, cs_dc
):
    kv_buy = buy(trader, kv_cache, 10)
    buy(rival, kv_cache, 5)
    sell(trader, kv_cache, 4)
    raft_buy = buy(trader, raft, 3)
    paper = announce(kv_cache, date=dt.date(2026, 10, 1), category=cs_dc)
    held_before_the_announcement(dt.date(2026, 10, 1))
    dividends.pay_dividend(
        term=kv_cache, paper_ids=[paper.pk], per_share=50_000, date=dt.date(2026, 10, 1)
    )
    page = Page.of(trader_client.get("/portfolio/"))
    text = page.text
    money = format_credits

    kv, rf = Term.objects.get(pk=kv_cache.pk), Term.objects.get(pk=raft.pk)
    kv_value = stats.sell_back_value(supply=kv.supply, shares=6, p0=kv.p0, k=kv.k)
    raft_value = stats.sell_back_value(supply=rf.supply, shares=3, p0=rf.p0, k=rf.k)
    cash = trading.balance(trader)
    assert cash == GRANT - kv_buy.total + (
        Trade.objects.get(side="sell").total + 300_000 - raft_buy.total
    )
    assert f"Cash {money(cash)}" in text
    assert f"Shares at sell-back value {money(kv_value + raft_value)}" in text
    assert f"Net worth {money(cash + kv_value + raft_value)}" in text
    assert f"Gain {money(cash + kv_value + raft_value - GRANT, signed=True)}" in text
    assert "Dividends received 0.30 credits" in text

    kv_basis = kv_buy.total * 6 // 10
    assert page.row("KV cache") == [
        "KV cache",
        "6",
        money(kv_value, unit=False),
        money(kv_basis, unit=False),
        money(kv_value - kv_basis, unit=False, signed=True),
        "0.30",
        "Sell all Buy max",
    ]
    assert page.row("Raft")[:4] == [
        "Raft",
        "3",
        money(raft_value, unit=False),
        money(raft_buy.total, unit=False),
    ]
    assert "Dividend on KV cache (1 mentioning paper) +0.30" in text
    assert "Sold 4 shares of KV cache" in text and "Bought 3 shares of Raft" in text
    assert f"+0.30 {money(cash, unit=False)}" in text  # the newest running balance
    assert "Rank #1 of 2" in text


def test_portfolio_history_is_paginated(trader_client, trader, kv_cache, monkeypatch):
    monkeypatch.setattr(portfolio, "ROWS_PER_PAGE", 2)
    for _ in range(3):
        buy(trader, kv_cache, 1)
    first = page_text(trader_client.get("/portfolio/"))
    assert "Page 1 of 2" in first and "Starting grant +" not in first
    second = page_text(trader_client.get("/portfolio/?page=2"))
    assert "Starting grant +1,000.00 1,000.00" in second


def test_portfolio_costs_a_fixed_number_of_queries(trader_client, trader, cs_dc):
    def measure() -> int:
        # Rendered for each request (it moves with every price), in a fixed number of queries.
        return count_queries(trader_client, "/portfolio/")

    first = Term.objects.create(phrase="word 0")
    buy(trader, first, 1)
    few = measure()
    for n in range(1, 8):
        term = Term.objects.create(phrase=f"word {n}")
        buy(trader, term, 2)
        paper = announce(term, date=dt.date(2026, 10, 1), category=cs_dc)
        held_before_the_announcement(dt.date(2026, 10, 1))
        dividends.pay_dividend(
            term=term, paper_ids=[paper.pk], per_share=50_000, date=dt.date(2026, 10, 1)
        )
    # 12 before orders and notices: their orders, the notices marked seen, the recent ones.
    assert measure() == few == 15
