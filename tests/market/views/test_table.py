"""The market table as readers use it: figures, sorting, search, pages, and what it costs."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.cache import cache
from django.utils import timezone

from market.models import Term
from tests.factories import announce, buy
from tests.html import Page, page_text
from tests.market.pages import count_queries, count_warm_queries, market_terms

pytestmark = pytest.mark.django_db


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
    # Signed in, no more: the session with its reader is read with the page's facts.
    assert count_queries(client, "/market/") == 5
    # Until a figure changes the table is kept: only the session with its reader and the
    # page's facts are read, in one statement.
    assert count_warm_queries(client, "/market/") == 1


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
