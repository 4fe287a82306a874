"""The market index leads with what moves: most mentioned this week, then the biggest moves,
then the most traded; the other orders stay one click away."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core.cache import cache
from django.utils import timezone

from market.models import Term
from tests.factories import announce, buy
from tests.html import Page
from tests.market.pages import market_terms

pytestmark = pytest.mark.django_db


def order(client, query: str = "") -> list[str]:
    cache.clear()
    return market_terms(client.get(f"/market/{query}"))


@pytest.fixture
def young_market(trader, rival, kv_cache, raft, cs_dc):
    """Alphabetically: gossip, KV cache, Raft, sharding. Raft is mentioned most this week, then
    sharding; KV cache moved most today; gossip traded most, but mostly weeks ago."""
    gossip = Term.objects.create(phrase="gossip")
    sharding = Term.objects.create(phrase="sharding")
    now = timezone.now()
    today = timezone.localdate()
    for _ in range(2):
        announce(raft, date=today, category=cs_dc)
    announce(sharding, date=today, category=cs_dc)
    buy(trader, kv_cache, 40, when=now - dt.timedelta(hours=2))
    buy(rival, gossip, 50, when=now - dt.timedelta(days=20))
    buy(rival, gossip, 5, when=now - dt.timedelta(days=2))
    return {"gossip": gossip, "sharding": sharding}


def test_the_default_order_is_what_moves(client, young_market):
    # Mentions this week first (Raft 2, sharding 1), then the biggest move today (KV cache).
    assert order(client)[:3] == ["Raft", "sharding", "KV cache"]


def test_biggest_movers_and_most_traded_are_one_click_away(client, young_market):
    assert order(client, "?sort=movers")[0] == "KV cache"
    assert order(client, "?sort=traded")[:2] == ["KV cache", "gossip"]
    assert order(client, "?sort=phrase") == ["gossip", "KV cache", "Raft", "sharding"]


def test_the_views_are_links_with_the_current_one_marked(client, young_market):
    views = Page.of(client.get("/market/?sort=traded")).one("nav", cls="market-views")
    assert views.texts("a") == [
        "What’s moving",
        "Biggest movers",
        "Most traded",
        "A–Z",
    ]
    assert views.texts("a", href="?sort=traded", aria_current="true") == ["Most traded"]
