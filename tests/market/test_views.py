"""The market's pages as traders use them: the table, a term's page, quoting and trading
(with every bad input refused without changing anything), portfolio, leaderboard and rules."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import resolve
from django.utils import timezone

from market import curve, dividends, stats, trading, views
from market.models import DEFAULT_K, DEFAULT_P0, Term, Trade
from market.units import format_credits
from peerrevenue import keep
from tests.factories import announce, buy, sell, username
from tests.html import Page, page_text
from tests.market.pages import confirm, get_quote, hidden_fields, market_terms, trade_forms
from tests.market.state import held_before_the_announcement

pytestmark = pytest.mark.django_db

GRANT = 1_000_000_000


def count_queries(client, url: str) -> int:
    # Measure a real render: nothing kept, in the shared cache or this process.
    cache.clear()
    keep.forget_local()
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


def count_warm_queries(client, url: str) -> int:
    """Queries of a render right after another one, with nothing changed in between."""
    assert client.get(url).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries)


@pytest.fixture
def trader_client(client, trader, password):
    client.login(username=trader.username, password=password)
    return client


# The market table ---------------------------------------------------------------------------


def test_market_lists_each_term_with_its_figures_and_a_sparkline(
    client, trader, rival, kv_cache, raft, cs_dc
):
    now = timezone.now()
    buy(trader, kv_cache, 10, when=now - dt.timedelta(days=3))
    buy(rival, kv_cache, 10, when=now - dt.timedelta(hours=3))
    announce(kv_cache, date=dt.date(2026, 10, 1), category=cs_dc)
    response = client.get("/market/")
    assert response.status_code == 200
    page = Page.of(response)
    assert page.row("KV cache")[:7] == [
        "KV cache",
        "1.20",  # price of the 21st share
        "+9.1%",  # from 1.10 a day ago
        "+20.0%",  # from 1.00 a week ago
        "20",
        "2",
        "1",
    ]
    assert page.row("Raft")[:7] == ["Raft", "2.00", "0.0%", "0.0%", "0", "0", "0"]
    assert ("/market/kv-cache/", "KV cache") in page.links()
    spark = page.row_of("KV cache").one("svg", cls="sparkline")
    assert spark.get("role") == "img"
    assert spark.get("aria-label") == "KV cache, last 7 days: 1.00 to 1.20 credits (rising)"
    assert spark.select("polyline")


def test_market_headers_are_sort_links_with_aria_sort(client, kv_cache):
    page = Page.of(client.get("/market/?sort=phrase"))
    sorted_by = page.one(aria_sort=...)  # one column says how the table is sorted
    assert sorted_by.tag == "th" and sorted_by.get("scope") == "col"
    assert sorted_by.get("aria-sort") == "ascending"
    assert sorted_by.first("a").get("href") == "?sort=-phrase"
    hrefs = [href for href, _ in page.links()]
    for key in ("price", "change", "supply", "holders", "mentions"):
        assert f"?sort=-{key}" in hrefs  # numbers sort high to low first
    page = Page.of(client.get("/market/?sort=-price&q=kv"))
    sorted_by = page.one(aria_sort=...)
    assert sorted_by.tag == "th" and sorted_by.get("scope") == "col"
    assert sorted_by.get("aria-sort") == "descending"
    assert "num" in sorted_by.classes
    assert sorted_by.first("a").get("href") == "?sort=price&q=kv"
    assert "?sort=phrase&q=kv" in [href for href, _ in page.links()]  # the others keep the search


def test_market_sorts_rows(client, trader, kv_cache, raft):
    buy(trader, kv_cache, 3)
    buy(trader, raft, 1)
    gossip = Term.objects.create(phrase="gossip", p0=100)
    assert gossip.pk

    def order(query: str) -> list[str]:
        cache.clear()
        return market_terms(client.get(f"/market/{query}"))

    assert order("?sort=phrase") == ["gossip", "KV cache", "Raft"]
    assert order("?sort=-price") == ["Raft", "KV cache", "gossip"]
    assert order("?sort=-supply") == ["KV cache", "Raft", "gossip"]
    assert order("?sort=supply") == ["gossip", "Raft", "KV cache"]
    assert order("?sort=nonsense") == order("")  # what moves, the default


def test_market_search_filters_by_phrase_and_alias(client, kv_cache, raft):
    Term.objects.create(phrase="key-value store", aliases=["KV store"])
    text = page_text(client.get("/market/?q=kv+st"))
    assert "key-value store" in text and "Raft" not in text and "KV cache" not in text
    assert Page.of(client.get("/market/?q=kv+st")).form("/market/")["q"] == "kv st"
    text = page_text(client.get("/market/?q=paxos"))
    assert "No term matches “paxos”" in text


def test_market_empty_state(client, db):
    text = page_text(client.get("/market/"))
    assert "Nothing trades yet" in text


def test_market_shows_50_terms_a_page(client, db):
    Term.objects.bulk_create(
        [Term(phrase=f"word {n:02d}", slug=f"word-{n:02d}") for n in range(51)]
    )
    first = client.get("/market/?sort=phrase")
    assert len(market_terms(first)) == 50
    assert "?sort=phrase&page=2" in [href for href, _ in Page.of(first).links()]
    second = client.get("/market/?sort=phrase&page=2")
    assert market_terms(second) == ["word 50"]
    assert "Page 2 of 2" in page_text(second)
    assert client.get("/market/?page=3").status_code == 404


def test_market_page_costs_a_fixed_number_of_queries(
    client, trader, password, django_user_model, cs_dc
):
    def add_terms(count: int, start: int) -> None:
        for n in range(start, start + count):
            term = Term.objects.create(phrase=f"term {n}")
            buy(trader, term, n + 1)
            announce(term, date=dt.date(2026, 10, 1), category=cs_dc)

    add_terms(3, 0)
    few = count_queries(client, "/market/?sort=-mentions")
    add_terms(27, 3)
    many = count_queries(client, "/market/?sort=-mentions")
    # The page's facts, count, page, sparklines, and the terms' comment counts (discussion's
    # "comments" holes: one query for the table).
    assert few == many <= 5
    client.login(username=trader.username, password=password)
    assert count_queries(client, "/market/") == 6  # plus the session with its reader
    # Until a figure changes the table is kept: only the session with its reader and the
    # page's facts are read.
    assert count_warm_queries(client, "/market/") == 2


def test_market_marks_halted_terms_and_leaves_out_delisted_ones(client, kv_cache, raft):
    Term.objects.filter(pk=kv_cache.pk).halt(reason="Under review")
    Term.objects.filter(pk=raft.pk).delist(reason="Merged")
    text = page_text(client.get("/market/"))
    assert "KV cache Halted" in text
    assert "Raft" not in text


def test_site_navigation_links_the_market(client, kv_cache):
    page = Page.of(client.get("/market/"))
    assert "Market" in page.texts("a", href="/market/", aria_current="page")
    hrefs = [href for href, _ in page.links()]
    assert "/leaderboard/" in hrefs and "/market/rules/" in hrefs


# A term's page --------------------------------------------------------------------------------


def test_term_page_shows_the_term_chart_papers_holders_and_trades(
    client, trader, rival, kv_cache, cs_dc
):
    Term.objects.filter(pk=kv_cache.pk).update(
        aliases=["KV-cache", "key-value cache"],
        description="Caches **keys** and values.",
        created_at=dt.datetime(2026, 9, 1, tzinfo=dt.UTC),
    )
    buy(trader, kv_cache, 7)
    buy(rival, kv_cache, 3)
    paper = announce(
        kv_cache, date=dt.date(2026, 10, 1), category=cs_dc, title="Paging the KV cache"
    )
    held_before_the_announcement(dt.date(2026, 10, 1))
    dividends.pay_dividend(
        term=kv_cache, paper_ids=[paper.pk], per_share=50_000, date=dt.date(2026, 10, 1)
    )
    response = client.get("/market/kv-cache/")
    assert response.status_code == 200
    page = Page.of(response)
    text = page.text
    assert page.one("h1").text == "KV cache"
    assert "1.10 credits a share · 10 shares out · 1 mentioning paper" in text
    assert "Also counted as: KV-cache, key-value cache" in text
    description = page.one("section", cls="term-description")
    assert description.text == "Caches keys and values."
    assert description.texts("strong") == ["keys"]
    chart = page.first("svg", cls="price-chart")
    assert chart.get("role") == "img" and chart.select("title")
    assert chart.select(cls="price-chart__dividend")
    assert (f"/abs/{paper.arxiv_id}/", "Paging the KV cache") in page.links()
    assert page.row("tobias") == ["tobias", "7"]
    assert page.row("rhea") == ["rhea", "3"]
    assert "rhea Buy 3 1.10" in text and "tobias Buy 7 1.07" in text  # newest first
    assert page.texts("td", cls="side--buy") == ["Buy", "Buy"]
    assert page.select("form", action="/market/kv-cache/quote/")
    assert page.select(data_quote_url="/market/kv-cache/quote.json")


def test_term_description_markdown_is_sanitised(client, kv_cache):
    Term.objects.filter(pk=kv_cache.pk).update(
        description=(
            "Safe *text*.\n\n<script>alert('x')</script>\n\n"
            '<img src=x onerror="alert(1)">\n\n[click](javascript:alert(1)) '
            '[paper](https://arxiv.org/abs/2401.00001)\n\n<p onclick="evil()">para</p>'
        )
    )
    description = Page.of(client.get("/market/kv-cache/")).one("section", cls="term-description")
    assert description.texts("em") == ["text"]
    assert not description.select("script") and not description.select("img")
    names = {name for element in description.iter() for name in element.attrs}
    assert not {name for name in names if name.startswith("on")}  # onerror, onclick
    assert not [v for v in description.attribute_values() if "javascript:" in v]
    for word in ("alert(", "onerror", "onclick", "javascript:"):
        assert word not in description.text  # nor left behind as text
    link = description.one("a", href="https://arxiv.org/abs/2401.00001")
    assert (link.text, link.get("rel")) == ("paper", "nofollow noopener noreferrer")


def test_term_page_costs_a_fixed_number_of_queries(
    client, trader, password, django_user_model, kv_cache, cs_dc
):
    buy(trader, kv_cache, 1)
    announce(kv_cache, date=dt.date(2026, 9, 30), category=cs_dc)  # a history to chart
    # Listed before that paper, as the later ones will be: no "before listing" list to fetch.
    held_before_the_announcement(dt.date(2026, 9, 30))
    count_queries(client, "/market/kv-cache/")  # compiles this term set's matcher, once
    few = count_queries(client, "/market/kv-cache/")
    for n in range(15):
        user = django_user_model.objects.create_user(f"holder{n}")
        buy(user, kv_cache, n + 1)
        paper = announce(kv_cache, date=dt.date(2026, 10, 1 + n % 5), category=cs_dc)
        held_before_the_announcement(dt.date(2026, 10, 1))
        dividends.pay_dividend(
            term=kv_cache, paper_ids=[paper.pk], per_share=50_000, date=dt.date(2026, 10, 1)
        )
    # count_queries empties the cache, so the mention trend is counted afresh each time: its
    # newest-listing check, the terms and one scan of the papers (once cached, only the check);
    # and the page's facts.
    # And the term research (market.research): one query.
    assert count_queries(client, "/market/kv-cache/") == few <= 12
    client.login(username=trader.username, password=password)
    # The session with its reader (one statement); the trade box (cash, holding, follow, any
    # orders here) is read with the page's facts, in the same statement.
    assert count_queries(client, "/market/kv-cache/") == few + 1
    # Kept until a figure changes: the session with its reader, and the page's facts with the
    # trade box.
    assert count_warm_queries(client, "/market/kv-cache/") == 2
    # With an order here, the reader's orders too (and their fills, in one more).
    trading.place_order(
        user=trader, term=kv_cache, side="buy", shares=2, limit_price=1, key="low-bid"
    )
    assert count_warm_queries(client, "/market/kv-cache/") == 4


def test_signed_in_trader_sees_holding_and_cash(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 4)
    text = page_text(trader_client.get("/market/kv-cache/"))
    cash = format_credits(trading.balance(trader))
    assert f"You hold 4 shares. Your cash: {cash}." in text


def test_a_reader_from_before_the_market_sees_the_grant_on_the_term_and_quote_pages(
    client, django_user_model, kv_cache
):
    # bulk_create sends no post_save, like users created before the market app existed: no
    # account, so the trade box's figures find no row and the account is opened.
    (old_timer,) = django_user_model.objects.bulk_create([django_user_model(username="old")])
    client.force_login(old_timer)
    grant = format_credits(GRANT)
    assert f"You hold 0 shares. Your cash: {grant}." in page_text(client.get("/market/kv-cache/"))
    assert trading.balance(old_timer) == GRANT
    quote = page_text(get_quote(client, shares="1", side="buy"))
    assert grant in quote


@pytest.mark.parametrize("status", ["halted", "delisted"])
def test_an_untradable_term_says_why_and_offers_no_form(client, kv_cache, status):
    terms = Term.objects.filter(pk=kv_cache.pk)
    if status == "halted":
        terms.halt(reason="Suspected manipulation; under review")
    else:
        terms.delist(reason="Too generic")
    page = Page.of(client.get("/market/kv-cache/"))
    text = page.text
    if status == "halted":
        assert "Trading in “KV cache” is halted. Reason: Suspected manipulation" in text
    else:
        assert "“KV cache” is delisted and can no longer be traded. Reason: Too generic" in text
    assert f"No trading while the term is {status}." in text
    assert not [v for v in page.attribute_values() if "/quote/" in v]  # no form, no link


def test_unknown_term_is_a_404_that_says_so(client, db):
    response = client.get("/market/no-such-word/")
    assert response.status_code == 404
    assert "There is no term “no-such-word” on the market." in page_text(response)


def test_a_term_named_like_a_fixed_page_gets_a_slug_of_its_own(client, db):
    rules = Term.objects.create(phrase="Rules")
    assert rules.slug == "rules-term"
    assert resolve(rules.get_absolute_url()).func is views.term_detail
    assert "Rules" in page_text(client.get(rules.get_absolute_url()))
    # The rules page is still the rules page.
    assert resolve("/market/rules/").func is views.rules
    # Another term of the same family never takes a slug already used.
    again = Term.objects.create(phrase="rules!")
    assert again.slug == "rules-term-2"
    assert resolve(again.get_absolute_url()).func is views.term_detail


def test_a_reserved_slug_given_in_code_is_replaced_too(db):
    term = Term.objects.create(phrase="House rules", slug="rules")
    assert term.slug == "rules-term"
    # A row saved before this check existed is moved on its next save, even a partial one.
    Term.objects.filter(pk=term.pk).update(slug="rules")
    term.refresh_from_db()
    term.description = "Edited"
    term.save(update_fields=["description"])
    term.refresh_from_db()
    assert (term.slug, term.description) == ("rules-term", "Edited")


# Quote, confirm, trade --------------------------------------------------------------------------


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


def test_live_quote_json(trader_client, kv_cache):
    response = trader_client.get("/market/kv-cache/quote.json?side=buy&shares=5")
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    data = response.json()
    assert data["ok"] is True
    q = trading.quote(term=kv_cache, side="buy", shares=5)
    assert (data["amount"], data["fee"], data["total"]) == (q.amount, q.fee, q.total)
    assert (data["average_price"], data["price_after"]) == (q.average_price, q.price_after)
    assert data["text"]["summary"] == "Buying 5 shares: you pay 5.15 credits"
    assert data["text"]["fee"] == "0.051 credits"
    assert data["problem"] == ""

    by_budget = trader_client.get("/market/kv-cache/quote.json?side=buy&budget=10").json()
    assert by_budget["shares"] == 9 and "buys at most 9 shares" in by_budget["note"]

    bad = trader_client.get("/market/kv-cache/quote.json?side=buy&shares=1.5")
    assert bad.status_code == 400
    assert bad.json() == {"ok": False, "error": "Shares are whole: enter 1 or 2, not 1.5."}

    Term.objects.filter(pk=kv_cache.pk).halt(reason="Paused")
    halted = trader_client.get("/market/kv-cache/quote.json?side=buy&shares=1")
    assert halted.status_code == 409
    assert "halted (Paused)" in halted.json()["error"]


def test_live_quotes_are_rate_limited_per_trader_and_per_address(
    trader_client, rival, password, settings, kv_cache
):
    settings.RATELIMIT_QUOTES_PER_WINDOW = 2
    url = "/market/kv-cache/quote.json?side=buy&shares=5"
    for _ in range(2):
        assert trader_client.get(url).status_code == 200
    limited = trader_client.get(url)
    assert limited.status_code == 429
    assert limited["Cache-Control"] == "no-store"
    assert limited.json() == {
        "ok": False,
        "error": "You are asking for quotes too fast: at most 2 live quotes every 5 minutes. "
        "Wait a little, or press “Get a quote”.",
    }
    # Asking about a term that does not exist counts too, and is refused the same way.
    assert trader_client.get("/market/nope/quote.json?side=buy&shares=5").status_code == 429
    # The quote page, which needs no script, still works.
    assert get_quote(trader_client, side="buy", shares="5").status_code == 200

    # Another trader from the same address has quotes of their own.
    other = Client()
    other.login(username=rival.username, password=password)
    assert other.get(url).status_code == 200
    # Visitors who are not signed in count by address.
    visitor, elsewhere = Client(), Client(REMOTE_ADDR="192.0.2.7")
    assert [visitor.get(url).status_code for _ in range(3)] == [200, 200, 429]
    assert elsewhere.get(url).status_code == 200


def test_pages_carry_no_inline_script(trader_client, trader, kv_cache):
    buy(trader, kv_cache, 1)
    for url in ("/market/", "/market/kv-cache/", "/market/kv-cache/quote/?side=buy&shares=1",
                "/portfolio/", "/leaderboard/", "/market/rules/"):  # fmt: skip
        for script in Page.of(trader_client.get(url)).select("script"):
            src = script.get("src", "")
            assert set(script.attrs) == {"src", "defer"}, (url, script.attrs)
            assert src.startswith("/static/js/") and src.endswith(".js"), (url, src)
            name = src.removeprefix("/static/js/").removesuffix(".js")
            assert name and all(c.isalnum() or c == "_" for c in name), (url, src)
            assert not script.children, (url, src)  # nothing inline
    scripts = Page.of(trader_client.get("/market/kv-cache/")).select("script")
    assert "/static/js/quote.js" in [script.get("src") for script in scripts]


# Portfolio --------------------------------------------------------------------------------------


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
    monkeypatch.setattr(views, "ROWS_PER_PAGE", 2)
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


# Leaderboard ------------------------------------------------------------------------------------


def test_leaderboard_ranks_by_net_worth_minus_grants(client, trader, rival, kv_cache):
    buy(trader, kv_cache, 20)
    buy(rival, kv_cache, 20)
    page = Page.of(client.get("/leaderboard/"))
    expected = {username(a): a for a in stats.leaderboard()}
    tobias = stats.portfolio(user=trader)
    assert expected["tobias"].score == tobias.gain
    assert page.row("1") == [
        "1",
        "tobias",
        format_credits(tobias.gain, unit=False, signed=True),
        format_credits(tobias.net_worth, unit=False),
        format_credits(tobias.cash, unit=False),
        format_credits(tobias.holdings_value, unit=False),
    ]
    assert page.row("2")[1] == "rhea"
    assert "2 traders, best first." in page.text


def test_leaderboard_shows_your_rank_even_off_the_first_page(
    client, password, django_user_model, kv_cache, monkeypatch
):
    monkeypatch.setattr(views, "ROWS_PER_PAGE", 2)
    users = [django_user_model.objects.create_user(f"t{n}", password=password) for n in range(4)]
    for user in users:
        buy(user, kv_cache, 10)  # each later buyer pays more: earlier is better
    client.login(username="t3", password=password)
    page = Page.of(client.get("/leaderboard/"))
    assert "You are #4 of 4, with a gain of" in page.text
    assert "t3" not in [page.row(str(rank))[1] for rank in (1, 2)]
    yours = Page.of(client.get("/leaderboard/?page=2")).one("tr", cls="is-you", aria_current="true")
    rank = yours.cells()[0]
    assert (rank.tag, rank.classes, rank.text) == ("td", ["num"], "4")


def test_leaderboard_for_someone_who_has_not_traded(client, reader, password, db):
    assert "No traders yet" in page_text(client.get("/leaderboard/"))
    client.login(username=reader.username, password=password)
    assert "You are not ranked yet" in page_text(client.get("/leaderboard/"))


def test_leaderboard_costs_a_fixed_number_of_queries(client, django_user_model, kv_cache):
    buy(django_user_model.objects.create_user("one"), kv_cache, 1)
    few = count_queries(client, "/leaderboard/")
    for n in range(20):
        buy(django_user_model.objects.create_user(f"more{n}"), kv_cache, 1)
    assert count_queries(client, "/leaderboard/") == few <= 2


# Rules --------------------------------------------------------------------------------------------


def test_rules_page_explains_the_market_with_the_real_numbers(client, db):
    text = page_text(client.get("/market/rules/"))
    assert "Every new account starts with 1,000.00 credits." in text
    assert "The first share costs 1.00 credits" in text and "0.01 credits dearer" in text
    cost = curve.cost(0, 10, p0=DEFAULT_P0, k=DEFAULT_K)
    fee = curve.fee(cost, basis_points=100)
    assert cost == 10_450_000 and fee == 104_500
    assert "Buying 10 shares costs 10.45 credits" in text
    assert "The fee is 0.10 credits, so you pay 10.55 credits." in text
    assert "a fee of 1% of the amount" in text
    assert "pays 0.05 credits for each share" in text
    # The counting rules, from the one Markdown source the matcher's docstring points to.
    assert "How mentions are counted" in text
    for rule in ("Case does not matter.", "Whole words only.", "Plurals count.", "Aliases"):
        assert rule in text
    assert "compiled matcher" not in text
    assert "**" not in text and "$" not in text


def test_rules_page_follows_the_settings(client, settings, db):
    settings.MARKET_FEE_BASIS_POINTS = 250
    settings.MARKET_DIVIDEND_PER_MENTION = 120_000
    settings.MARKET_STARTING_GRANT = 500_000_000
    text = page_text(client.get("/market/rules/"))
    assert "a fee of 2.5% of the amount" in text
    assert "pays 0.12 credits for each share" in text
    assert "Every new account starts with 500.00 credits." in text


def test_the_rules_page_has_one_markdown_source():
    source = views.RULES_FILE.read_text(encoding="utf-8")
    assert "A paper mentions a term" in source and "**Whole words only.**" in source
    assert "A paper mentions a term" in views.rules_markdown()
