"""Quoting and trading through the pages, with every bad input refused without changing
anything."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

from market import curve, trading
from market.models import Term, Trade
from market.units import format_credits
from tests.factories import buy
from tests.html import Page, page_text
from tests.market.pages import GRANT, confirm, get_quote, hidden_fields, trade_forms

pytestmark = pytest.mark.django_db


def test_quote_page_shows_the_price_and_a_confirm_form(trader_client, kv_cache):
    response = get_quote(trader_client, side="buy", shares="5")
    assert response.status_code == 200
    expected = trading.quote(term=kv_cache, side="buy", shares=5)
    text = page_text(response)
    assert "Buy 5 shares of “KV cache”" in text
    # The breakdown is exact, to the decimals each figure has (the fee's third): no figure
    # reads "5.1000" beside the total's "5.15".
    assert "Cost on the curve 5.10 credits" in text
    assert "Fee 0.051 credits" in text
    assert "You pay 5.15 credits" in text
    assert "Average price 1.02 credits a share" in text
    assert "Price after 1.05 credits" in text
    assert "Confirm: buy 5 for 5.15 credits" in text
    assert trade_forms(response)
    fields = hidden_fields(response)
    assert fields["side"] == "buy" and fields["shares"] == "5"
    assert fields["limit"] == str(expected.total) == "5151000"
    assert uuid.UUID(hex=fields["key"]).version == 4
    assert hidden_fields(get_quote(trader_client, side="buy", shares="5"))["key"] != fields["key"]
    assert response["Cache-Control"] == "private, no-cache"


def test_confirming_buys_and_comes_back_to_the_term_page(trader_client, trader, kv_cache):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    response = confirm(trader_client, fields)
    assert response.status_code == 302
    assert response["Location"] == "/market/kv-cache/"
    page = trader_client.get(response["Location"])
    assert "Bought 5 shares of KV cache for 5.15 credits (fee 0.05)" in page_text(page)
    trade = Trade.objects.get()
    assert (trade.side, trade.shares, trade.key) == ("buy", 5, fields["key"])
    assert trading.balance(trader) == GRANT - 5_151_000
    assert trading.holding(trader, kv_cache) == 5


def test_confirming_twice_trades_once(trader_client, trader, kv_cache):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    first = confirm(trader_client, fields)
    message = page_text(trader_client.get(first["Location"]))
    balance = trading.balance(trader)
    # A double click, or going back to the quote and confirming again: the same key.
    again = confirm(trader_client, fields)
    assert again.status_code == 200
    assert "Bought 5 shares of KV cache for 5.15 credits (fee 0.05)" in message
    assert "This trade was already placed" in page_text(again)
    assert Trade.objects.count() == 1
    assert trading.balance(trader) == balance
    # A new quote is a new order.
    confirm(trader_client, hidden_fields(get_quote(trader_client, side="buy", shares="5")))
    assert Trade.objects.count() == 2


def test_selling_through_the_pages(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 10)
    response = get_quote(trader_client, side="sell", shares="3")
    text = page_text(response)
    expected = trading.quote(term=kv_cache, side="sell", shares=3)
    assert "Sell 3 shares of “KV cache”" in text
    assert f"You receive {format_credits(expected.total)}" in text
    fields = hidden_fields(response)
    assert fields["limit"] == str(expected.total)
    follow = trader_client.get(confirm(trader_client, fields)["Location"])
    assert (
        f"Sold 3 shares of KV cache for {format_credits(expected.total)} "
        f"(fee {format_credits(expected.fee, unit=False)})" in page_text(follow)
    )
    assert trading.holding(trader, kv_cache) == 7


def test_a_quote_can_be_asked_for_with_post_too(trader_client, kv_cache):
    response = trader_client.post("/market/kv-cache/quote/", {"side": "buy", "shares": "2"})
    assert response.status_code == 200
    assert hidden_fields(response)["shares"] == "2"


def test_the_quote_url_without_an_order_shows_the_order_form(trader_client, kv_cache):
    response = trader_client.get("/market/kv-cache/quote/")
    assert response.status_code == 200
    text = page_text(response)
    assert "Trade “KV cache”" in text and "Get a quote" in text
    assert "Choose buy or sell" not in text


def test_a_budget_becomes_the_most_shares_it_pays_for(trader_client, kv_cache):
    response = get_quote(trader_client, side="buy", budget="10")
    shares = curve.shares_for_total(0, 10_000_000, p0=kv_cache.p0, k=kv_cache.k, basis_points=100)
    assert shares == 9
    assert hidden_fields(response)["shares"] == "9"
    text = page_text(response)
    assert "10.00 credits buys at most 9 shares now." in text
    total = trading.quote(term=kv_cache, side="buy", shares=9).total
    assert total <= 10_000_000 < trading.quote(term=kv_cache, side="buy", shares=10).total
    assert f"You pay {format_credits(total)}" in text


def test_a_huge_budget_is_capped_at_the_most_shares_a_trade_can_have(
    trader_client, kv_cache, settings
):
    settings.MARKET_MAX_SHARES_PER_TRADE = 50
    response = get_quote(trader_client, side="buy", budget="100000")
    assert hidden_fields(response)["shares"] == "50"
    assert "would buy more than 50 shares, the most a trade can have" in page_text(response)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"side": "buy", "shares": ""}, "Enter a number of shares, or a budget in credits"),
        ({"side": "buy", "shares": "-3"}, "Enter a positive number of shares, at least 1."),
        ({"side": "buy", "shares": "0"}, "Enter at least 1 share."),
        ({"side": "buy", "shares": "1.5"}, "Shares are whole: enter 1 or 2, not 1.5."),
        ({"side": "buy", "shares": "0.5"}, "Shares are whole: enter at least 1."),
        ({"side": "buy", "shares": "99999999999999999999"}, "At most 10,000 shares a trade"),
        ({"side": "buy", "shares": "abc"}, "“abc” is not a whole number. Enter digits only"),
        ({"side": "buy", "shares": "１２"}, "“１２” is not a whole number."),
        ({"side": "buy", "shares": "5e3"}, "“5e3” is not a whole number."),
        ({"side": "hold", "shares": "5"}, "Choose buy or sell."),
        ({"side": "buy", "budget": "0"}, "Enter a budget above zero credits."),
        ({"side": "buy", "budget": "-5"}, "Enter a budget above zero credits."),
        ({"side": "buy", "budget": "lots"}, "“lots” is not an amount of credits."),
        ({"side": "buy", "budget": "0.0000001"}, "at most six decimal places"),
        ({"side": "buy", "budget": "0.5"}, "0.50 credits does not buy one share of “KV cache”"),
        ({"side": "sell", "budget": "5"}, "A budget is for buying; to sell, enter a number"),
        ({"side": "buy", "shares": "2", "budget": "5"}, "either a number of shares or a budget"),
    ],
)
def test_bad_quote_input_is_refused_in_plain_words(
    trader_client, kv_cache, snapshot, params, message
):
    before = snapshot()
    response = get_quote(trader_client, **params)
    assert response.status_code in (400, 409)
    assert message in page_text(response)
    assert not trade_forms(response)
    assert snapshot() == before


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"shares": ""}, "This confirmation is incomplete or was changed."),
        ({"shares": "-1"}, "Enter a positive number of shares"),
        ({"shares": "0"}, "Enter at least 1 share."),
        ({"shares": "2.5"}, "Shares are whole: enter 2 or 3, not 2.5."),
        ({"shares": "1000000000000"}, "At most 10,000 shares a trade"),
        ({"shares": "five"}, "“five” is not a whole number."),
        ({"side": "steal"}, "Choose buy or sell."),
        ({"key": ""}, "This confirmation has no key, so a repeat could trade twice."),
        ({"key": "<script>"}, "This confirmation is incomplete or was changed."),
        ({"key": "k" * 101}, "This confirmation is incomplete or was changed."),
        ({"limit": ""}, "This confirmation is incomplete or was changed."),
        ({"limit": "-1"}, "This confirmation is incomplete or was changed."),
        ({"limit": "lots"}, "This confirmation is incomplete or was changed."),
    ],
)
def test_bad_confirmation_is_refused_and_trades_nothing(
    trader_client, kv_cache, snapshot, overrides, message
):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    before = snapshot()
    response = confirm(trader_client, fields, **overrides)
    assert response.status_code == 400
    text = page_text(response)
    assert message in text and "Nothing was traded." in text
    assert snapshot() == before


def test_a_confirmation_missing_a_field_trades_nothing(trader_client, kv_cache, snapshot):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    before = snapshot()
    for name in fields:
        partial = {k: v for k, v in fields.items() if k != name}
        response = trader_client.post("/market/kv-cache/trade/", partial)
        assert response.status_code == 400, name
    assert snapshot() == before


def test_an_unknown_term_cannot_be_quoted_or_traded(trader_client, kv_cache, snapshot):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    before = snapshot()
    assert get_quote(trader_client, slug="nope", side="buy", shares="5").status_code == 404
    assert trader_client.get("/market/nope/quote.json?side=buy&shares=5").status_code == 404
    response = confirm(trader_client, fields, slug="nope")
    assert response.status_code == 404
    assert "There is no term “nope” on the market." in page_text(response)
    assert snapshot() == before


def test_a_halted_term_cannot_be_quoted_or_traded(trader_client, kv_cache, snapshot):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    Term.objects.filter(pk=kv_cache.pk).halt(reason="Under review")
    before = snapshot()
    response = get_quote(trader_client, side="buy", shares="5")
    assert response.status_code == 409
    assert "Trading in “KV cache” is halted (Under review)." in page_text(response)
    response = confirm(trader_client, fields)
    assert response.status_code == 409
    text = page_text(response)
    assert "Trading in “KV cache” is halted (Under review)." in text
    assert "Nothing was traded." in text
    assert not trade_forms(response)
    assert snapshot() == before


def test_trading_needs_a_login(client, kv_cache, snapshot):
    response = get_quote(client, side="buy", shares="5")
    assert response.status_code == 200
    assert "Log in to trade" in page_text(response)
    assert not trade_forms(response)
    before = snapshot()
    response = confirm(
        client, {"side": "buy", "shares": "5", "limit": "9999999", "key": uuid.uuid4().hex}
    )
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/market/kv-cache/"
    assert snapshot() == before


def test_trading_without_the_csrf_token_is_forbidden(trader, password, kv_cache, snapshot):
    browser = Client(enforce_csrf_checks=True)
    browser.login(username=trader.username, password=password)
    fields = hidden_fields(get_quote(browser, side="buy", shares="5"))
    quote_page = Page.of(browser.get("/market/kv-cache/quote/?side=buy&shares=5"))
    assert "csrfmiddlewaretoken" in quote_page.hidden_inputs()
    before = snapshot()
    response = confirm(browser, fields)
    assert response.status_code == 403
    assert snapshot() == before


def test_the_trade_url_only_takes_post(trader_client, kv_cache):
    assert trader_client.get("/market/kv-cache/trade/").status_code == 405


def test_trading_is_rate_limited_per_user(trader_client, settings, kv_cache, snapshot):
    settings.RATELIMIT_TRADES_PER_WINDOW = 2
    for _ in range(2):
        fields = hidden_fields(get_quote(trader_client, side="buy", shares="1"))
        assert confirm(trader_client, fields).status_code == 302
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="1"))
    before = snapshot()
    response = confirm(trader_client, fields)
    assert response.status_code == 429
    assert "You are trading too fast: at most 2 trades every 5 minutes." in page_text(response)
    assert snapshot() == before
    assert Trade.objects.count() == 2


def test_a_price_move_before_confirming_trades_nothing_and_requotes(
    trader_client, trader, rival, kv_cache, snapshot
):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="5"))
    buy(rival, kv_cache, 10)  # someone else got there first
    before = snapshot()
    response = confirm(trader_client, fields)
    assert response.status_code == 409
    text = page_text(response)
    assert "The price moved: 5 shares of “KV cache” now cost" in text
    assert "Nothing was traded." in text
    fresh = hidden_fields(response)
    assert int(fresh["limit"]) == trading.quote(term=kv_cache, side="buy", shares=5).total
    assert int(fresh["limit"]) > int(fields["limit"]) and fresh["key"] != fields["key"]
    assert snapshot() == before


def test_buying_more_than_you_can_afford_is_explained_before_and_refused_after(
    trader_client, trader, kv_cache, snapshot
):
    response = get_quote(trader_client, side="buy", shares="10000")
    text = page_text(response)
    assert "but you have 1,000.00 credits. You can afford" in text
    assert not trade_forms(response)
    total = trading.quote(term=kv_cache, side="buy", shares=10_000).total
    before = snapshot()
    response = confirm(
        trader_client,
        {"side": "buy", "shares": "10000", "limit": str(total), "key": uuid.uuid4().hex},
    )
    assert response.status_code == 409
    assert "but you have 1,000.00 credits" in page_text(response)
    assert snapshot() == before


def test_selling_more_than_you_hold_is_explained_and_refused(
    trader_client, trader, rival, kv_cache, snapshot
):
    buy(rival, kv_cache, 10)
    buy(trader, kv_cache, 2)
    response = get_quote(trader_client, side="sell", shares="5")
    text = page_text(response)
    assert "You hold 2 shares of “KV cache” and cannot sell 5. Sell at most 2." in text
    assert "Nothing would be traded." in text and "Nothing was traded." not in text
    assert not trade_forms(response)
    before = snapshot()
    response = confirm(
        trader_client, {"side": "sell", "shares": "5", "limit": "0", "key": uuid.uuid4().hex}
    )
    assert response.status_code == 409
    assert "You hold 2 shares of “KV cache” and cannot sell 5. Sell at most 2." in page_text(
        response
    )
    assert snapshot() == before
