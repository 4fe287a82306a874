"""Limit orders and follows in a real browser, at phone and desktop widths: place an order from
a term page, see it in the portfolio, see it fill after another trader sells, cancel another;
follow a term and see the notice."""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.auth import get_user_model

from market import notices, trading
from market.models import Order, Term
from tests.conftest import PASSWORD
from tests.e2e.sessions import signed_in

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def no_sideways_scroll(page, where: str) -> None:
    overflow = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{where} is {overflow}px too wide"


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_place_see_fill_and_cancel_orders_and_follow_a_term(
    browser, live_server, viewport, screenshot
):
    name = f"{viewport['width']}px"
    term = Term.objects.create(phrase="KV cache", p0=1_000_000, k=10_000)
    users = get_user_model().objects
    users.create_user("tobias", "tobias@example.org", PASSWORD)
    rival = users.create_user("rhea", "rhea@example.org", PASSWORD)
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=uuid.uuid4().hex)  # 1.30

    context, page = signed_in(browser, live_server, viewport)
    try:
        page.goto("/market/kv-cache/")
        box = page.locator(".trade-box")
        box.get_by_text("Leave a limit order").click()
        box.get_by_label("How many, at most").fill("10")
        box.get_by_label("Limit (credits a share)").fill("1.25")
        box.get_by_role("button", name="Place order").click()
        page.wait_for_url("**/market/kv-cache/#order-form")
        assert "waiting for the price to reach your limit" in page.locator(".messages").inner_text()
        mine = page.locator(".my-orders")
        assert "Buy up to 10 shares of “KV cache” at most 1.25 credits a share" in mine.inner_text()
        no_sideways_scroll(page, f"the term page at {name}")
        screenshot(f"orders-1-placed-{name}")

        # A second, lower order, to cancel later.
        # With an order waiting, the order form stays open.
        assert page.locator("details.order-box[open]").count() == 1
        box.get_by_label("How many, at most").fill("3")
        box.get_by_label("Limit (credits a share)").fill("0.90")
        box.get_by_role("button", name="Place order").click()
        page.wait_for_url("**/market/kv-cache/#order-form")

        page.goto("/portfolio/")
        orders = page.locator("#orders-heading + .order-list")
        assert orders.locator(".order").count() == 2
        assert "0 of 10 shares filled; 10 shares waiting" in orders.inner_text()
        no_sideways_scroll(page, f"the portfolio at {name}")

        # Another trader sells: the price falls into reach and the order fills at once.
        trading.sell(user=rival, term=term, shares=10, min_proceeds=None, key=uuid.uuid4().hex)
        page.goto("/portfolio/")
        text = page.locator("main").inner_text()
        assert "6 of 10 shares filled in 1 fill; 4 shares waiting" in text
        assert "bought 6 shares for" in page.locator(".notices").inner_text()
        screenshot(f"orders-2-filled-{name}")

        lower = page.locator(".order", has_text="at most 0.90 credits a share")
        lower.get_by_role("button", name="Cancel order: Buy up to 3 shares").click()
        page.wait_for_url(re.compile(r".*/portfolio/#order-\d+$"))  # back at the order's row
        assert "Cancelled: Buy up to 3 shares" in page.locator(".messages").inner_text()
        assert "You cancelled it." in page.locator(".order", has_text="0.90 credits").inner_text()
        assert Order.objects.get(limit_price=900_000).state == "cancelled"

        # Follow the term, then a move past the threshold is told on the next page.
        page.goto("/market/kv-cache/")
        page.get_by_label("Tell me when it moves more than").select_option("500")
        page.get_by_role("button", name="Follow “KV cache”").click()
        page.wait_for_url("**/market/kv-cache/#follow")
        assert "You follow “KV cache”" in page.locator(".messages").inner_text()
        trading.buy(user=rival, term=term, shares=20, max_cost=None, key=uuid.uuid4().hex)
        assert notices.tell_moves() == 1  # what the worker's minute sweep does
        page.goto("/market/")
        told = page.locator(".messages").inner_text()
        assert "“KV cache” rose" in told and "past your 5% threshold" in told
        no_sideways_scroll(page, f"the market with a notice at {name}")
        screenshot(f"orders-3-notice-{name}")
    finally:
        context.close()
