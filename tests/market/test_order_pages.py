"""Orders, follows, notices and "why this counted" as a trader meets them on the pages."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.core import mail

from market import notices, trading
from market.models import Follow, Notice, Order, Term
from tests.factories import announce
from tests.html import Page, page_text

# Real commits: the fill after a trade and the notices' flags happen on commit.
pytestmark = pytest.mark.django_db(transaction=True)

CREDIT = 1_000_000


def key() -> str:
    return uuid.uuid4().hex


@pytest.fixture
def term(db) -> Term:
    return Term.objects.create(phrase="KV cache", p0=CREDIT, k=10_000, aliases=["key-value cache"])


@pytest.fixture
def trader_client(client, trader):
    client.force_login(trader)
    return client


def place(client, *, side="buy", shares="10", limit="1.25", expires=""):
    return client.post(
        "/market/kv-cache/order/",
        {"side": side, "shares": shares, "limit": limit, "expires": expires, "key": key()},
        follow=True,
    )


def test_an_order_placed_from_the_term_page_waits_shows_and_fills_after_a_sale(
    trader_client, trader, rival, term
):
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    page = trader_client.get("/market/kv-cache/")
    assert Page.of(page).select(action="/market/kv-cache/order/"), "the trade box offers orders"
    response = place(trader_client)
    text = page_text(response)
    assert "Buy up to 10 shares of “KV cache” at most 1.25 credits a share: waiting" in text
    assert "Your orders here" in text and "0 of 10 shares filled; 10 shares waiting" in text
    trading.sell(user=rival, term=term, shares=10, min_proceeds=None, key=key())
    text = page_text(trader_client.get("/portfolio/"))
    assert "6 of 10 shares filled in 1 fill; 4 shares waiting" in text
    assert "bought 6 shares for" in text  # the notice, in "What happened"
    # The notice was shown on the portfolio, so it is not shown again on the next page.
    assert "bought 6 shares" not in page_text(trader_client.get("/market/"))


def test_an_order_that_fills_partly_at_once_says_so_once_with_price_and_fee_apart(
    trader_client, trader, term
):
    # KV cache: 1.00 credits + 0.01 a share; 25 shares out, so the next share costs 1.25.
    trading.buy(user=trader, term=term, shares=25, max_cost=None, key=key())
    response = place(trader_client, shares="2", limit="1.25")
    messages = Page.of(response).one("ul", cls="messages").texts("li")
    assert messages == [
        "Buy up to 2 shares of “KV cache” at most 1.25 credits a share: bought 1 share at "
        "once, at 1.25 credits a share, plus a fee of 0.0125 credits; the other 1 share waits "
        "for the price."
    ]
    # The fill's own notice said the same: it is not told again on the next page.
    assert not Page.of(trader_client.get("/market/")).select("ul", cls="messages")
    # It is still listed in the portfolio's "What happened".
    assert "bought 1 share for" in page_text(trader_client.get("/portfolio/"))


def test_an_order_that_fills_at_once_gives_the_average_price_within_the_limit(
    trader_client, trader, term
):
    response = place(trader_client, shares="3", limit="1.50")
    text = Page.of(response).one("ul", cls="messages").text
    assert "at most 1.50 credits a share: filled; bought 3 shares at once, at 1.01 credits a" in (
        " ".join(text.split())
    )
    assert "a share on average, plus a fee of 0.0303 credits." in " ".join(text.split())


def test_the_next_page_tells_a_fill_once_as_one_batched_notice(trader_client, trader, rival, term):
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    trading.place_order(
        user=trader, term=term, side="buy", shares=3, limit_price=1_250_000, key=key()
    )
    trading.place_order(
        user=trader, term=term, side="buy", shares=2, limit_price=1_240_000, key=key()
    )
    trading.sell(user=rival, term=term, shares=30, min_proceeds=None, key=key())
    messages = Page.of(trader_client.get("/market/")).one("ul", cls="messages").text
    assert messages.count("Your order to buy") == 2 and "and is filled." in messages
    assert "Your order" not in page_text(trader_client.get("/market/"))


def test_cancelling_from_the_portfolio(trader_client, trader, rival, term):
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    order = trading.place_order(
        user=trader, term=term, side="buy", shares=10, limit_price=1_000_000, key=key()
    )
    response = trader_client.post(
        "/orders/cancel/", {"order": order.pk, "next": "/portfolio/"}, follow=True
    )
    text = page_text(response)
    assert "Cancelled: Buy up to 10 shares of “KV cache” at most 1.00 credits a share." in text
    assert "You cancelled it." in text
    assert Order.objects.get(pk=order.pk).state == "cancelled"


def test_someone_else_cannot_cancel_an_order(client, trader, rival, term):
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    order = trading.place_order(
        user=trader, term=term, side="buy", shares=10, limit_price=1_000_000, key=key()
    )
    client.force_login(rival)
    assert client.post("/orders/cancel/", {"order": order.pk}).status_code == 404
    assert Order.objects.get(pk=order.pk).state == "open"


def test_an_order_form_with_a_bad_limit_says_why(trader_client, term):
    text = page_text(place(trader_client, limit="cheap"))
    assert "Order not placed: “cheap” is not an amount of credits" in text
    assert not Order.objects.exists()


def test_placing_an_order_comes_back_to_the_order_box_whatever_happened(trader_client, term):
    """Placed or refused, the reader is sent to the order box (its fragment), not the page's
    top: the form says so in its ``next``, and without one the view does the same."""
    form = Page.of(trader_client.get("/market/kv-cache/")).one(
        "form", action="/market/kv-cache/order/"
    )
    assert form.hidden_inputs()["next"] == "/market/kv-cache/#order-form"
    assert Page.of(trader_client.get("/market/kv-cache/")).one("details", id="order-form")
    for limit in ("1.25", "cheap"):
        response = place(trader_client, limit=limit)
        assert response.redirect_chain == [("/market/kv-cache/#order-form", 302)]
    response = trader_client.post(
        "/market/kv-cache/order/",
        {
            "side": "buy",
            "shares": "1",
            "limit": "0.50",
            "key": key(),
            "next": "/market/kv-cache/#order-form",
        },
    )
    assert response["Location"] == "/market/kv-cache/#order-form"
    hostile = trader_client.post(
        "/market/kv-cache/order/",
        {"side": "buy", "shares": "1", "limit": "0.50", "key": key(), "next": "//evil.example/"},
    )
    assert hostile["Location"] == "/market/kv-cache/#order-form"


@pytest.mark.parametrize(
    "limit, says",
    [
        ("1,5", "write decimals with a point (12.50)"),  # a decimal comma, not 15 credits
        ("0.000001", "Enter a limit of at least 0.01 credits a share."),  # would read 0.00
    ],
)
def test_a_limit_that_would_be_misread_is_refused(trader_client, term, limit, says):
    assert says in page_text(place(trader_client, limit=limit))
    assert not Order.objects.exists()


def test_an_order_that_crosses_the_traders_own_order_is_refused(trader_client, trader, term):
    trading.buy(user=trader, term=term, shares=20, max_cost=None, key=key())
    place(trader_client, side="sell", shares="5", limit="1.50")
    text = page_text(place(trader_client, side="buy", shares="5", limit="1.60"))
    assert "Order not placed: Your own order to sell at 1.50 credits a share" in text


def test_following_a_term_tells_of_a_move_past_the_threshold(trader_client, trader, rival, term):
    response = trader_client.post(
        "/market/kv-cache/follow/", {"threshold": "1000", "next": "/market/kv-cache/"}, follow=True
    )
    assert "You follow “KV cache”" in page_text(response)
    assert Follow.objects.get(user=trader).threshold_bp == 1000
    trading.buy(user=rival, term=term, shares=5, max_cost=None, key=key())  # +5%: not past 10%
    assert notices.tell_moves() == 0
    trading.buy(user=rival, term=term, shares=10, max_cost=None, key=key())  # +15%
    assert notices.tell_moves() == 1
    assert notices.tell_moves() == 0  # told once; measured from 1.15 now
    text = Page.of(trader_client.get("/market/")).one("ul", cls="messages").text
    assert (
        "“KV cache” rose 15% to 1.15 credits a share (from 1.00 credits), past your 10% threshold."
        in text
    )


def test_a_followed_term_that_pays_tells_its_followers(trader, term, cs_dc):
    from market.signals import pay_announced_dividends

    notices.follow(user=trader, term=term)
    announce(None, date=dt.date(2026, 10, 1), category=cs_dc, abstract="We page the KV cache.")
    Term.objects.filter(pk=term.pk).update(listed_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    pay_announced_dividends(sender=None, category=cs_dc, date=dt.date(2026, 10, 1))
    notice = Notice.objects.get(user=trader, kind="dividend")
    assert (
        notice.text == "“KV cache” paid a dividend: 1 new paper mentioned it, 0.05 credits a share."
    )


def test_the_digest_carries_the_untold_notices_once(trader, rival, term, cs_dc):
    from accounts.digest import send_daily_digests
    from accounts.models import Preferences

    Preferences.objects.update_or_create(user=trader, defaults={"daily_digest": True})
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    trading.place_order(
        user=trader, term=term, side="buy", shares=3, limit_price=1_250_000, key=key()
    )
    trading.sell(user=rival, term=term, shares=30, min_proceeds=None, key=key())
    assert send_daily_digests(date=dt.date(2026, 10, 1)) == 1
    assert "Your orders and followed terms:" in mail.outbox[0].body
    assert "Your order to buy up to 3 shares of “KV cache”" in mail.outbox[0].body
    send_daily_digests(date=dt.date(2026, 10, 2))  # they hold shares: a digest of their moves
    assert "Your orders and followed terms:" not in mail.outbox[-1].body  # told once


def test_halting_in_the_admin_cancels_orders_and_tells_the_owner(staff, trader, rival, term):
    from django.test import Client

    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    order = trading.place_order(
        user=trader, term=term, side="buy", shares=10, limit_price=1_000_000, key=key()
    )
    staff.post(
        "/admin/market/term/",
        {"action": "halt", "_selected_action": [term.pk], "apply": "1", "reason": "Feed check"},
    )
    assert Order.objects.get(pk=order.pk).state == "cancelled"
    client = Client()
    client.force_login(trader)
    text = Page.of(client.get("/market/")).one("ul", cls="messages").text
    assert "was cancelled, none filled: trading in “KV cache” was halted (Feed check)." in text


def test_why_this_counted_marks_the_words_and_names_the_rule(client, term, cs_dc):
    paper = announce(
        term,
        date=dt.date(2026, 10, 1),
        category=cs_dc,
        title="Paging attention",
        abstract="Serving is memory bound. We shard the key-value caches of many requests. "
        "It helps.",
    )
    term_page = client.get("/market/kv-cache/")
    assert Page.of(term_page).select(href=f"/market/kv-cache/why/{paper.arxiv_id}/")
    response = client.get(f"/market/kv-cache/why/{paper.arxiv_id}/")
    page = Page.of(response)
    assert page.one("mark").text == "key-value caches"
    assert page.one("blockquote").text == "We shard the key-value caches of many requests."
    rules = page.text
    assert "Alias: “key-value cache” is listed as another spelling of “KV cache”" in rules
    assert "Plural: the last word takes “s”" in rules
    assert client.get("/market/kv-cache/why/2611.99999/").status_code == 404


def test_why_a_possessive_and_a_compound_counted(client, term, cs_dc):
    term2 = Term.objects.create(phrase="cache")
    paper = announce(
        term2,
        date=dt.date(2026, 10, 1),
        category=cs_dc,
        title="On caching",
        abstract="The cache's size matters. A write-cache helps.",
    )
    text = page_text(client.get(f"/market/cache/why/{paper.arxiv_id}/"))
    # Each rule named as the rules page numbers and names it.
    assert (
        "Followed by a possessive ’s, which leaves the word whole (rule 4, “Possessives count”)"
        in (text)
    )
    assert (
        "Part of a hyphenated compound" in text and "(rule 5, “Hyphenated compounds count”)" in text
    )
