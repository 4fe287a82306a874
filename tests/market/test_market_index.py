"""The market index leads with what moves: most mentioned this week, then the biggest moves,
then the most traded; the other orders stay one click away."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.cache import cache
from django.utils import timezone

from market.models import Term
from tests.market.test_stats import announce, buy
from tests.text import search

pytestmark = pytest.mark.django_db


def order(client, query: str = "") -> list[str]:
    cache.clear()
    markup = client.get(f"/market/{query}").content.decode()
    return re.findall(r'<th scope="row"><a href="/market/[\w-]+/">([^<]+)</a>', markup)


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
    markup = client.get("/market/?sort=traded").content.decode()
    views = search(r'<nav class="market-views".*?</nav>', markup, re.S).group()
    assert re.findall(r">([^<]+)</a>", views) == [
        "What’s moving",
        "Biggest movers",
        "Most traded",
        "A–Z",
    ]
    assert '<a href="?sort=traded" aria-current="true">Most traded</a>' in views
