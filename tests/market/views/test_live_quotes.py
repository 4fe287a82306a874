"""What the pages' scripts ask for (the live quote) and how the scripts are served."""

from __future__ import annotations

import pytest
from django.test import Client

from market import trading
from market.models import Term
from tests.factories import buy
from tests.html import Page
from tests.market.pages import get_quote

pytestmark = pytest.mark.django_db


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
