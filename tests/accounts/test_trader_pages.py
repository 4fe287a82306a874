"""Public trader pages: what others see, what a trader who hides their page still sees, and
where the pages are linked from."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import Preferences
from market.models import Term
from tests.factories import buy, sell
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db

PRIVATE = "This trader's page is private."


@pytest.fixture
def raft(db) -> Term:
    return Term.objects.create(phrase="Raft", p0=2_000_000, k=50_000)


def hide(user) -> None:
    Preferences.objects.update_or_create(user=user, defaults={"public_trader_page": False})


def test_anyone_sees_a_traders_holdings_gain_and_recent_trades(client, trader, kv_cache, raft):
    buy(trader, kv_cache, 10)
    buy(trader, raft, 3)
    sell(trader, raft, 3)
    response = client.get("/traders/tobias/")
    assert response.status_code == 200
    page = Page.of(response)
    assert "tobias" in page.text and "Net worth 999.67 credits" in page.text
    assert page.row("KV cache")[:3] == ["KV cache", "10", "10.35"]
    assert "Raft" not in page.row("KV cache")[0]
    trades = page.one(role="region", aria_labelledby="trades-heading")
    # Newest first: the sale, then the two buys.
    assert trades.texts(cls="side") == ["Sell", "Buy", "Buy"]


def test_a_hidden_page_says_so_to_others_and_shows_nothing(client, trader, rival, kv_cache):
    buy(trader, kv_cache, 10)
    hide(trader)
    response = client.get("/traders/tobias/")
    assert response.status_code == 404
    assert PRIVATE in page_text(response)
    assert "KV cache" not in page_text(response)

    client.force_login(rival)
    assert client.get("/traders/tobias/").status_code == 404


def test_the_owner_still_sees_their_hidden_page(client, trader, kv_cache):
    buy(trader, kv_cache, 10)
    hide(trader)
    client.force_login(trader)
    response = client.get("/traders/tobias/")
    assert response.status_code == 200
    text = page_text(response)
    assert "KV cache" in text
    assert "Only you can see this page: others are told it is private" in text


def test_staff_see_hidden_pages(staff, trader, kv_cache):
    buy(trader, kv_cache, 1)
    hide(trader)
    assert staff.get("/traders/tobias/").status_code == 200


def test_settings_hide_and_show_the_page(client, trader):
    owner = Client()
    owner.force_login(trader)
    assert "Show my trader page to others" in page_text(owner.get("/accounts/settings/"))
    owner.post("/accounts/settings/", {})  # both boxes unticked
    assert client.get("/traders/tobias/").status_code == 404
    owner.post("/accounts/settings/", {"public_trader_page": "on"})
    assert client.get("/traders/tobias/").status_code == 200


def test_unknown_and_inactive_traders_are_not_found(client, trader, django_user_model):
    assert client.get("/traders/nobody/").status_code == 404
    trader.is_active = False
    trader.save()
    response = client.get("/traders/tobias/")
    assert response.status_code == 404 and PRIVATE not in page_text(response)


def test_leaderboard_and_top_holders_link_to_trader_pages(client, trader, kv_cache):
    buy(trader, kv_cache, 2)
    link = ("/traders/tobias/", "tobias")
    assert link in Page.of(client.get("/leaderboard/")).links()
    assert link in Page.of(client.get("/market/kv-cache/")).links()


def test_a_name_with_a_slash_still_has_a_page(client, django_user_model, kv_cache):
    odd = django_user_model.objects.create_user("ann/<b>bold</b>")
    buy(odd, kv_cache, 1)
    board = Page.of(client.get("/leaderboard/"))
    link = "/traders/ann/%3Cb%3Ebold%3C/b%3E/"
    # The name is shown as it was typed, never made into markup.
    assert (link, "ann/<b>bold</b>") in board.links() and "bold" not in board.texts("b")
    response = client.get(link)
    assert response.status_code == 200
    page = Page.of(response)
    assert "ann/<b>bold</b>" in page.text and "bold" not in page.texts("b")
