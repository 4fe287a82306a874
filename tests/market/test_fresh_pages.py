"""Kept market pieces are never stale: after any change a signed-in reader's next render of
the market table, a term's page and their portfolio shows it.

Each test renders the three pages first (so that their pieces are kept), then changes one
thing the way the site does (a trade by another trader, a day's dividends, a term listed,
halted, delisted or edited) and reads the pages again.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.conf import settings

from market import dividends, stats
from market.models import Term
from market.units import format_credits
from tests.factories import announce, buy
from tests.html import Page, page_text
from tests.market.state import held_before_the_announcement

pytestmark = pytest.mark.django_db

PAGES = ("/market/", "/market/kv-cache/", "/portfolio/")
DAY = dt.date(2026, 10, 1)


@pytest.fixture
def trader_client(client, trader, password):
    client.login(username=trader.username, password=password)
    return client


def keep_pieces(client) -> None:
    for url in PAGES:
        for _ in range(2):  # the second render is served from the kept pieces
            assert client.get(url).status_code == 200


def bare(amount: int) -> str:
    return format_credits(amount, unit=False)


def test_another_traders_trade_shows_on_every_page(trader_client, trader, rival, kv_cache):
    buy(trader, kv_cache, 10)
    keep_pieces(trader_client)
    assert Page.of(trader_client.get("/market/")).row("KV cache")[4:6] == ["10", "1"]

    buy(rival, kv_cache, 10)

    kv_cache.refresh_from_db()
    assert Page.of(trader_client.get("/market/")).row("KV cache")[1:6] == [
        bare(kv_cache.price),
        "+20.0%",
        "+20.0%",
        "20",
        "2",
    ]
    term_page = Page.of(trader_client.get("/market/kv-cache/"))
    text = term_page.text
    assert f"{format_credits(kv_cache.price)} a share · 20 shares out" in text
    assert "rhea" in text  # a holder and a recent trade
    # The reader's own row is still marked, in a table that was kept for everyone.
    assert term_page.one("tr", cls="is-you").cells()[0].text == trader.username
    worth = stats.sell_back_value(supply=20, shares=10, p0=kv_cache.p0, k=kv_cache.k)
    assert Page.of(trader_client.get("/portfolio/")).row("KV cache")[2] == bare(worth)
    assert "Rank #1 of 2" in page_text(trader_client.get("/portfolio/"))


def test_a_days_dividends_show_on_every_page(trader_client, trader, kv_cache, cs_dc):
    buy(trader, kv_cache, 10)
    # The day's listing is stored (the ingest bumps the pages generation) before the payout:
    # pages rendered in between must not outlive the dividends.
    announce(None, date=DAY, category=cs_dc, title="Paging the KV cache")
    held_before_the_announcement(DAY)
    keep_pieces(trader_client)
    assert "Dividends received 0.00 credits" in page_text(trader_client.get("/portfolio/"))

    dividends.pay_dividends_for_day(category=cs_dc, date=DAY)

    paid = 10 * settings.MARKET_DIVIDEND_PER_MENTION
    assert Page.of(trader_client.get("/market/")).row("KV cache")[6] == "1"  # mentions
    text = page_text(trader_client.get("/market/kv-cache/"))
    assert "1 mentioning paper since it was listed" in text
    assert "Paging the KV cache" in text
    assert "Dividend on 1 Oct 2026: 1 mentioning paper" in text
    text = page_text(trader_client.get("/portfolio/"))
    assert f"Dividends received {format_credits(paid)}" in text
    assert "Dividend on KV cache (1 mentioning paper)" in text


def test_a_newly_listed_term_shows_on_the_market(trader_client, kv_cache):
    keep_pieces(trader_client)
    Term.objects.create(phrase="Paxos")
    assert Page.of(trader_client.get("/market/")).row("Paxos")[0] == "Paxos"


def test_a_halted_term_shows_halted_on_every_page(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 3)
    keep_pieces(trader_client)

    Term.objects.filter(pk=kv_cache.pk).halt(reason="Under review")

    assert "KV cache Halted" in page_text(trader_client.get("/market/"))
    text = page_text(trader_client.get("/market/kv-cache/"))
    assert "Trading in “KV cache” is halted. Reason: Under review" in text
    assert "No trading while the term is halted." in text
    assert Page.of(trader_client.get("/portfolio/")).row("KV cache")[0] == "KV cache Halted"


def test_a_delisted_term_leaves_the_market(trader_client, trader, kv_cache, raft):
    buy(trader, kv_cache, 3)
    keep_pieces(trader_client)

    Term.objects.filter(pk=kv_cache.pk).delist(reason="Merged")

    assert "KV cache" not in page_text(trader_client.get("/market/"))
    assert "“KV cache” is delisted" in page_text(trader_client.get("/market/kv-cache/"))
    assert Page.of(trader_client.get("/portfolio/")).row("KV cache")[0] == "KV cache Delisted"


def test_an_edited_term_shows_its_new_words(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 3)
    keep_pieces(trader_client)

    kv_cache.phrase = "KV caches"
    kv_cache.description = "Keys and values kept between decoding steps."
    kv_cache.save()

    assert Page.of(trader_client.get("/market/")).row("KV caches")[0] == "KV caches"
    text = page_text(trader_client.get(f"/market/{kv_cache.slug}/"))
    assert "Keys and values kept between decoding steps." in text
    assert Page.of(trader_client.get("/portfolio/")).row("KV caches")[0] == "KV caches"


def test_kept_pieces_are_markup_not_text(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 1)
    keep_pieces(trader_client)
    for url in PAGES:
        page = Page.of(trader_client.get(url))
        assert page.select("table")
        # Markup kept as text would show its tags to the reader.
        assert "<" not in page.text and not [v for v in page.attribute_values() if "<" in v]


def test_another_reader_never_sees_the_first_readers_trade_box(
    client, trader, rival, password, kv_cache
):
    buy(trader, kv_cache, 4)
    client.login(username=trader.username, password=password)
    assert "You hold 4 shares." in page_text(client.get("/market/kv-cache/"))
    client.logout()
    client.login(username=rival.username, password=password)
    page = Page.of(client.get("/market/kv-cache/"))
    assert "You hold 0 shares." in page.text
    assert not page.select(cls="is-you")
    client.logout()
    assert "You hold" not in page_text(client.get("/market/kv-cache/"))
