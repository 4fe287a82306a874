"""A term's page: its chart, papers, holders and trades, the reader's trade box, and its
address."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import resolve

from market import dividends, trading
from market.models import Term
from market.units import format_credits
from market.views import rules as rules_page
from market.views import term
from tests.factories import announce, buy
from tests.html import Page, page_text
from tests.market.pages import GRANT, count_queries, count_warm_queries, get_quote
from tests.market.state import held_before_the_announcement

pytestmark = pytest.mark.django_db


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
    # And the term research (market.research): one query; the verified authors' positions
    # (market.open_positions): one query.
    assert count_queries(client, "/market/kv-cache/") == few <= 13
    client.login(username=trader.username, password=password)
    # The session with its reader and the trade box (cash, holding, follow, any orders here)
    # are read with the page's facts, in the same statement: no more than for anyone.
    assert count_queries(client, "/market/kv-cache/") == few
    # Kept until a figure changes: that one statement.
    assert count_warm_queries(client, "/market/kv-cache/") == 1
    # With an order here, the reader's orders too (and their fills, in one more).
    trading.place_order(
        user=trader, term=kv_cache, side="buy", shares=2, limit_price=1, key="low-bid"
    )
    assert count_warm_queries(client, "/market/kv-cache/") == 3


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
    assert resolve(rules.get_absolute_url()).func is term.term_detail
    assert "Rules" in page_text(client.get(rules.get_absolute_url()))
    # The rules page is still the rules page.
    assert resolve("/market/rules/").func is rules_page.rules
    # Another term of the same family never takes a slug already used.
    again = Term.objects.create(phrase="rules!")
    assert again.slug == "rules-term-2"
    assert resolve(again.get_absolute_url()).func is term.term_detail


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
