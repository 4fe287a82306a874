"""The market table's figures are kept per term (market/board.py): ordered, searched and paged
in Python exactly as the database orders them, and a trade costs the table one term's figures
and one row, not every term's."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from market import board, stats
from market.models import Term
from peerrevenue import keep
from tests.factories import announce, buy, sell
from tests.market.pages import market_terms

pytestmark = pytest.mark.django_db


@pytest.fixture
def busy_market(trader, rival, kv_cache, raft, cs_dc):
    """Terms with ties everywhere (same prices, no trades, same mentions) and a few that moved
    today, a week ago, and were sold back: every sort has something to order and to break."""
    now = timezone.now()
    today = timezone.localdate()
    terms = [kv_cache, raft]
    terms += [Term.objects.create(phrase=phrase) for phrase in ("gossip", "Gossip protocol")]
    terms += [Term.objects.create(phrase=f"quiet {n}") for n in range(4)]
    terms.append(Term.objects.create(phrase="key-value store", aliases=["KV store"]))
    buy(trader, kv_cache, 40, when=now - dt.timedelta(hours=2))
    buy(rival, raft, 12, when=now - dt.timedelta(days=3))
    sell(rival, raft, 5, when=now - dt.timedelta(hours=5))
    buy(rival, terms[2], 30, when=now - dt.timedelta(days=9))
    buy(trader, terms[3], 3)
    announce(raft, date=today, category=cs_dc)
    announce(terms[3], date=today, category=cs_dc)
    return terms


def python_order(**arguments) -> list[str]:
    facts = keep.read(None, "mentions", "papers", "market_stamps")
    shown = board.table(facts, now=timezone.now(), **arguments)
    return [figures.phrase for figures in shown]


def database_order(**arguments) -> list[str]:
    return [term.phrase for term in stats.market_terms(now=timezone.now(), **arguments)]


@pytest.mark.parametrize(
    "sort",
    [*stats.MARKET_VIEWS, *stats.MARKET_SORTS],
)
@pytest.mark.parametrize("descending", [False, True])
def test_the_table_is_ordered_as_the_database_orders_it(busy_market, sort, descending):
    arguments = {"search": "", "sort": sort, "descending": descending}
    assert python_order(**arguments) == database_order(**arguments)


@pytest.mark.parametrize("search", ["kv st", "GOSSIP", "quiet", "nothing like it"])
def test_search_finds_what_the_database_finds(busy_market, search):
    arguments = {"search": search, "sort": "phrase", "descending": False}
    assert python_order(**arguments) == database_order(**arguments)


def test_the_figures_are_the_databases(busy_market):
    facts = keep.read(None, "mentions", "papers", "market_stamps")
    now = timezone.now()
    kept = {f.pk: f for f in board.every_term(facts, now=now)}
    for term in stats.market_terms(now=now):
        figures = kept[term.pk]
        assert (
            figures.price_now,
            figures.change_1d_bp,
            figures.change_7d_bp,
            figures.holder_count,
            figures.recent_mentions,
            figures.traded_7d,
        ) == (
            term.price_now,
            term.change_1d_bp,
            term.change_7d_bp,
            term.holder_count,
            term.recent_mentions,
            term.traded_7d,
        ), term.phrase


def test_a_trade_makes_the_figures_and_row_of_its_term_only(client, busy_market, trader):
    cache.clear()
    keep.forget_local()
    assert client.get("/market/").status_code == 200
    kv_cache = busy_market[0]
    buy(trader, kv_cache, 2)
    with CaptureQueriesContext(connection) as queries:
        response = client.get("/market/")
    # The page's facts and the traded term's present figures (its latest trade ends its
    # sparkline; the closed hours are kept): nothing about the other eight terms.
    assert len(queries) == 2
    assert len([q for q in queries.captured_queries if "market_holding" in q["sql"]]) == 1
    assert market_terms(response) == database_order(search="", sort="moving", descending=True)


def test_a_trade_shows_its_new_price_in_the_table_at_once(client, busy_market, rival):
    assert client.get("/market/?sort=phrase").status_code == 200
    gossip = busy_market[2]
    buy(rival, gossip, 25)
    gossip.refresh_from_db()
    row = next(
        line
        for line in client.get("/market/?sort=phrase").content.decode().split("<tr")
        if ">gossip</a>" in line
    )
    assert f"{gossip.supply}" in row
