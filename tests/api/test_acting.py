"""Acting with a token through the same domain functions as the web: the same refusals in
the same words, the same idempotency keys (a retry gets the first answer), orders and
library items of other readers answer 404."""

from __future__ import annotations

import json

import pytest

from library.models import SavedPaper
from market.models import Order, Term, Trade
from market.notices import following
from tests.factories import buy, make_paper

from .conftest import bearer

pytestmark = pytest.mark.django_db


@pytest.fixture
def kv(db) -> Term:
    return Term.objects.create(phrase="KV cache", slug="kv-cache")


def post(client, url, body, secret, key=None):
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return client.post(
        url, json.dumps(body), content_type="application/json", **extra, **bearer(secret)
    )


def test_a_quote_is_the_webs_quote(client, kv, trader_secret):
    quote = post(
        client, "/api/v1/terms/kv-cache/quote", {"side": "buy", "shares": 10}, trader_secret
    )
    assert quote.status_code == 200
    assert quote.json()["price_before"] == kv.price
    assert quote.json()["problem"] == ""
    sell = post(
        client, "/api/v1/terms/kv-cache/quote", {"side": "sell", "shares": 1}, trader_secret
    )
    assert sell.status_code == 409
    assert sell.json()["detail"].startswith("You hold 0 shares of “KV cache”")


def test_a_buy_trades_once_and_its_retry_gets_the_first_answer(client, kv, trader, trader_secret):
    url = "/api/v1/terms/kv-cache/trades"
    first = post(client, url, {"side": "buy", "shares": 5}, trader_secret, key="order-1")
    assert first.status_code == 201
    again = post(client, url, {"side": "buy", "shares": 5}, trader_secret, key="order-1")
    assert again.status_code == 200
    assert again.json() == {**first.json(), "repeated": True}
    assert Trade.objects.filter(account__user=trader).count() == 1
    kv.refresh_from_db()
    assert kv.supply == 5


def test_a_trade_without_a_key_is_refused_and_changes_nothing(client, kv, trader_secret):
    answer = post(
        client, "/api/v1/terms/kv-cache/trades", {"side": "buy", "shares": 5}, trader_secret
    )
    assert answer.status_code == 400
    assert "Idempotency-Key" in answer.json()["detail"]
    assert not Trade.objects.exists()


def test_refusals_are_the_webs_words(client, kv, trader, trader_secret, settings):
    url = "/api/v1/terms/kv-cache/trades"
    huge = post(client, url, {"side": "buy", "shares": 10**9}, trader_secret, key="a")
    assert huge.status_code == 409
    assert huge.json()["detail"].startswith("Enter a whole number of shares from 1 to")
    # The web's quote-then-confirm: the same trade with a limit below its cost.
    slipped = post(client, url, {"side": "buy", "shares": 5, "limit": 1}, trader_secret, key="b")
    assert slipped.json()["detail"].startswith("The price moved: 5 shares of “KV cache” now cost")
    kv.status = Term.Status.HALTED
    kv.status_reason = "Under review."
    kv.save()
    halted = post(client, url, {"side": "buy", "shares": 1}, trader_secret, key="c")
    assert halted.status_code == 409
    assert "is halted (Under review)" in halted.json()["detail"]
    wrong = post(client, url, {"side": "hold", "shares": 1}, trader_secret, key="d")
    assert wrong.status_code == 400
    assert wrong["Content-Type"] == "application/problem+json"
    assert not Trade.objects.exists()


def test_a_web_trade_and_an_api_trade_share_the_traders_limit(
    client, kv, trader, trader_secret, settings
):
    settings.RATELIMIT_TRADES_PER_WINDOW = 2
    url = "/api/v1/terms/kv-cache/trades"
    for n in range(2):
        assert (
            post(client, url, {"side": "buy", "shares": 1}, trader_secret, key=f"k{n}").status_code
            == 201
        )
    third = post(client, url, {"side": "buy", "shares": 1}, trader_secret, key="k3")
    assert third.status_code == 429
    assert third.json()["detail"].startswith("You are trading too fast: at most 2 trades")
    assert "Retry-After" in third


def test_orders_are_placed_listed_and_cancelled_and_others_answer_404(
    client, kv, trader, rival, trader_secret
):
    url = "/api/v1/terms/kv-cache/orders"
    body = {"side": "buy", "shares": 3, "limit_price": 500_000}
    placed = post(client, url, body, trader_secret, key="o-1")
    assert placed.status_code == 201
    assert placed.json()["state"] == "waiting"
    assert post(client, url, body, trader_secret, key="o-1").json()["repeated"] is True
    assert Order.objects.count() == 1
    order_id = placed.json()["id"]
    listed = client.get("/api/v1/orders", **bearer(trader_secret)).json()["items"]
    assert [order["id"] for order in listed] == [order_id]

    from api.tokens import make_token

    theirs = make_token(user=rival, name="rival", scopes=["trade", "read-private"]).secret
    assert client.get(f"/api/v1/orders/{order_id}", **bearer(theirs)).status_code == 404
    stolen = client.delete(f"/api/v1/orders/{order_id}", **bearer(theirs))
    assert stolen.status_code == 404
    assert stolen.json()["detail"] == "You have no such order."
    cancelled = client.delete(f"/api/v1/orders/{order_id}", **bearer(trader_secret))
    assert cancelled.json()["state"] == "cancelled"
    twice = client.delete(f"/api/v1/orders/{order_id}", **bearer(trader_secret))
    assert twice.status_code == 409
    assert twice.json()["detail"] == "That order is already cancelled; nothing was cancelled."


@pytest.mark.django_db(transaction=True)
def test_an_order_within_reach_fills_at_once(client, kv, trader, rival, trader_secret):
    # Committed for real: the fill procedure commits after each fill.
    buy(rival, kv, 10)
    kv.refresh_from_db()
    body = {"side": "buy", "shares": 2, "limit_price": kv.price * 2}
    filled = post(client, "/api/v1/terms/kv-cache/orders", body, trader_secret, key="now")
    assert filled.json()["state"] == "filled"
    assert filled.json()["filled"] == 2


def test_following_a_term(client, kv, trader, trader_secret):
    answer = client.put(
        "/api/v1/terms/kv-cache/follow",
        {"threshold_bp": 7},
        content_type="application/json",
        **bearer(trader_secret),
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("Choose a threshold of")
    client.put(
        "/api/v1/terms/kv-cache/follow",
        {},
        content_type="application/json",
        **bearer(trader_secret),
    )
    assert following(user=trader, term_id=kv.pk) is not None
    client.delete("/api/v1/terms/kv-cache/follow", **bearer(trader_secret))
    assert following(user=trader, term_id=kv.pk) is None


def test_saving_and_tagging_papers(client, trader, trader_secret):
    paper = make_paper()
    saved = client.put(f"/api/v1/library/{paper.arxiv_id}", **bearer(trader_secret))
    assert saved.json() == {"arxiv_id": paper.arxiv_id, "saved": True, "tags": []}
    tagged = client.put(
        f"/api/v1/library/{paper.arxiv_id}/tags",
        {"tags": ["to read", "consensus"]},
        content_type="application/json",
        **bearer(trader_secret),
    )
    assert tagged.json()["tags"] == ["to read", "consensus"]
    shelf = client.get("/api/v1/library", **bearer(trader_secret)).json()["items"]
    assert shelf == [{"arxiv_id": paper.arxiv_id, "saved": True, "tags": ["to read", "consensus"]}]
    client.delete(f"/api/v1/library/{paper.arxiv_id}", **bearer(trader_secret))
    assert not SavedPaper.objects.exists()
    hidden = make_paper(hidden=True)
    assert (
        client.put(f"/api/v1/library/{hidden.arxiv_id}", **bearer(trader_secret)).status_code == 404
    )


def test_private_answers_are_never_kept_by_a_proxy(client, trader_secret):
    me = client.get("/api/v1/me", **bearer(trader_secret))
    assert me["Cache-Control"] == "private, no-store"
    assert "Access-Control-Allow-Origin" not in me
