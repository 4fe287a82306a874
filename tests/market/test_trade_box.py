"""The trade box's one-click sizes: "Buy max (for my cash)" and "Sell all", on the term page and
on portfolio rows; and a trade box whose fields cannot be mistaken for values."""

from __future__ import annotations

import pytest

from market import curve, trading
from market.models import Term
from tests.factories import buy
from tests.html import Page, page_text
from tests.market.pages import confirm, get_quote, hidden_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def trader_client(client, trader, password):
    client.login(username=trader.username, password=password)
    return client


def test_buy_max_spends_all_it_can_and_leaves_less_than_one_more_share(
    trader_client, trader, kv_cache
):
    cash_before = trading.balance(trader)
    quote = get_quote(trader_client, preset="max")
    assert quote.status_code == 200
    fields = hidden_fields(quote)
    assert fields["side"] == "buy"
    shares, total = int(fields["shares"]), int(fields["limit"])
    assert "Your cash" in page_text(quote) and f"buys at most {shares:,} shares" in page_text(quote)

    confirm(trader_client, fields)

    cash_after = trading.balance(trader)
    assert cash_after == cash_before - total
    assert trading.holding(trader, kv_cache) == shares
    kv_cache.refresh_from_db()
    one_more = curve.cost(kv_cache.supply, 1, p0=kv_cache.p0, k=kv_cache.k)
    assert cash_after < one_more + curve.fee(one_more, basis_points=100)


def test_sell_all_sells_exactly_what_you_hold(trader_client, trader, rival, kv_cache):
    buy(trader, kv_cache, 7)
    buy(rival, kv_cache, 3)
    cash_before = trading.balance(trader)
    quote = get_quote(trader_client, preset="all", shares="9999", side="buy")
    fields = hidden_fields(quote)
    assert (fields["side"], fields["shares"]) == ("sell", "7")

    confirm(trader_client, fields)

    assert trading.holding(trader, kv_cache) == 0
    assert trading.balance(trader) == cash_before + int(fields["limit"])
    assert trading.holding(rival, kv_cache) == 3


def test_sell_all_with_nothing_held_says_so_and_trades_nothing(trader_client, trader, kv_cache):
    response = get_quote(trader_client, preset="all")
    assert response.status_code == 409
    assert "You hold no shares of “KV cache” to sell." in page_text(response)
    assert "Nothing would be traded." in page_text(response)


def test_one_click_sizes_need_a_login(client, kv_cache):
    response = get_quote(client, preset="max")
    assert response.status_code == 409
    assert "Log in to buy the most your cash allows or sell all." in page_text(response)


def test_an_unknown_preset_is_refused_in_words(trader_client, kv_cache):
    response = get_quote(trader_client, preset="everything")
    assert response.status_code == 400
    assert "Choose “Buy max” or “Sell all”." in page_text(response)


def test_portfolio_rows_offer_sell_all_and_buy_max(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 2)
    page = Page.of(trader_client.get("/portfolio/"))
    assert page.select("form", action="/market/kv-cache/quote/")
    assert page.select(name="preset", value="all") and page.select(name="preset", value="max")


def test_a_halted_holding_offers_no_one_click_trade(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 2)
    Term.objects.filter(pk=kv_cache.pk).halt(reason="Review")
    assert not Page.of(trader_client.get("/portfolio/")).select(name="preset")


def test_the_trade_box_has_no_placeholder_that_looks_like_a_value(trader_client, kv_cache):
    page = Page.of(trader_client.get("/market/kv-cache/"))
    assert not page.select(placeholder=...)
    assert "Buy max (for my cash)" in page.text
    assert "Buying? Spend a budget instead" in page.text


def sell_all_buttons(response) -> list[str]:
    return [text for text in Page.of(response).texts("button") if text.startswith("Sell all")]


def test_sell_all_counts_the_shares_held_after_each_of_ones_own_trades(
    trader_client, trader, kv_cache, monkeypatch
):
    from peerrevenue import freshness, keep

    page = f"/market/{kv_cache.slug}/"
    assert sell_all_buttons(trader_client.get(page)) == []
    real, frames = keep.render_frame, []

    def counting(*args, **kwargs):
        if not freshness.checking():  # the site's renders, not the freshness check's
            frames.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(keep, "render_frame", counting)
    buy(trader, kv_cache, 7)
    assert sell_all_buttons(trader_client.get(page)) == ["Sell all 7"]
    buy(trader, kv_cache, 2)
    assert sell_all_buttons(trader_client.get(page)) == ["Sell all 9"]
    assert "market/_quote_form.html" not in frames  # the form itself was not rendered again
    assert sell_all_buttons(get_quote(trader_client)) == ["Sell all 9"]  # nor lost on a quote


@pytest.mark.parametrize(
    ("asked", "chosen"),
    [({"preset": "max"}, "buy"), ({"preset": "max", "side": "sell"}, "buy")],
)
def test_a_buy_max_quote_shows_buy_chosen_in_its_form(trader_client, kv_cache, asked, chosen):
    # The portfolio's Buy max sends no side; the term page's may send the one left checked.
    page = Page.of(get_quote(trader_client, **asked))
    checked = page.select("input", type="radio", name="side", checked=...)
    assert [radio.attrs["value"] for radio in checked] == [chosen]
    assert page.one("input", type="text", name="shares").attrs.get("value", "") == ""


def test_a_sell_all_quote_shows_sell_chosen_in_its_form(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 4)
    page = Page.of(get_quote(trader_client, preset="all", side="buy"))
    checked = page.select("input", type="radio", name="side", checked=...)
    assert [radio.attrs["value"] for radio in checked] == ["sell"]
