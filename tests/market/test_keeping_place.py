"""Without script, an order's Cancel and the follow box come back to where they were pressed: their
``next`` names the order's row or the box as a fragment, and the view follows it there."""

from __future__ import annotations

import uuid

import pytest

from market import trading
from market.models import Follow, Order, Term
from tests.html import Page

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting(trader) -> tuple[Term, list[Order]]:
    term = Term.objects.create(phrase="KV cache")
    orders = [
        trading.place_order(
            user=trader, term=term, side="buy", shares=n, limit_price=500_000, key=uuid.uuid4().hex
        )
        for n in (2, 3)
    ]
    return term, orders


@pytest.mark.parametrize("where", ["/portfolio/", "/market/kv-cache/"])
def test_cancel_comes_back_to_the_orders_row(client, trader, waiting, where):
    _, orders = waiting
    client.force_login(trader)
    page = Page.of(client.get(where))
    for order in orders:
        row = page.one("li", cls="order", id=f"order-{order.pk}")
        assert row.one("input", name="next").attrs["value"] == f"{where}#order-{order.pk}"
    form = page.one("li", id=f"order-{orders[1].pk}").one("form")
    response = client.post(form.attrs["action"], form.hidden_inputs())
    assert response.status_code == 302
    assert response["Location"] == f"{where}#order-{orders[1].pk}"
    orders[1].refresh_from_db()
    assert orders[1].state == Order.State.CANCELLED
    # The row is still there to come back to, saying so.
    row = Page.of(client.get(where)).one("li", id=f"order-{orders[1].pk}")
    assert "Cancelled" in row.text


def test_follow_and_unfollow_come_back_to_the_follow_box(client, trader, waiting):
    term, _ = waiting
    client.force_login(trader)
    page = Page.of(client.get("/market/kv-cache/"))
    fields = page.form("follow")
    assert fields["next"] == "/market/kv-cache/#follow"
    response = client.post("/market/kv-cache/follow/", fields)
    assert response["Location"] == "/market/kv-cache/#follow"
    assert Follow.objects.filter(user=trader, term=term).exists()
    box = Page.of(client.get("/market/kv-cache/")).one("form", id="follow")
    assert box.one("button").text == "Unfollow"
