"""Trading from the word itself: a signed-in trader buys 3 shares from a highlighted word's
popover in two interactions (point at the word, confirm), with the mouse and with the keyboard
only; signed out, the popover says how to start and returns the reader to the page."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model

from market import trading
from market.models import Term
from tests.conftest import PASSWORD
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

LISTING = "/list/cs.DC/"


@pytest.fixture
def kv_day(cs_dc):
    term = Term.objects.create(phrase="KV cache")
    list_paper(
        make_paper(
            arxiv_id="2611.00042",
            title="Paging the attention state",
            abstract="We page the KV cache of concurrent requests with little overhead.",
        ),
        category=cs_dc,
        date=dt.date(2026, 11, 27),
    )
    user = get_user_model().objects.create_user("tobias", "tobias@example.org", PASSWORD)
    return term, user


def sign_in_from_the_listing(page) -> None:
    """Log in from the listing's own "Log in" link: it returns to the listing."""
    page.goto(LISTING)
    page.locator(".site-nav").get_by_role("link", name="Log in").click()
    page.get_by_label("Username").fill("tobias")
    page.get_by_label("Password").fill(PASSWORD)
    page.locator("main").get_by_role("button", name="Log in").click()
    page.wait_for_url(f"**{LISTING}")


def bought(page, term, user) -> None:
    page.wait_for_url(f"**{LISTING}#2611.00042")  # back at the word's paper
    assert "Bought 3 shares of KV cache" in page.locator(".messages").inner_text()
    assert trading.holding(user, term) == 3


def test_buy_three_shares_from_the_popover_with_the_mouse(page, kv_day, screenshot):
    term, user = kv_day
    sign_in_from_the_listing(page)
    word = page.locator(".paper__abstract a.term", has_text="KV cache")
    word.hover()  # 1: point at the word
    popover = page.locator(".term-pop")
    buy = popover.get_by_role("button", name=re.compile(r"^Buy 3 shares for 3\.\d\d credits$"))
    buy.wait_for()
    # The live quote: price, fee and total, before anything is traded.
    detail = popover.locator(".term-pop__detail").inner_text()
    assert re.fullmatch(
        r"3 shares at 1\.0\d{1,3} credits on average, fee 0\.0\d{1,3} credits: "
        r"you pay 3\.\d\d credits",
        detail,
    ), detail
    screenshot("popover-trade-mouse")
    buy.click()  # 2: confirm
    bought(page, term, user)
    # The next opening quotes again, for the trader's new holding.
    page.locator(".paper__abstract a.term", has_text="KV cache").hover()
    page.locator(".term-pop").get_by_text("You hold 3 shares").wait_for()
    assert page.locator(".term-pop").get_by_role("button", name=re.compile("^Sell 3 shares"))


def test_buy_three_shares_from_the_popover_with_the_keyboard_only(page, kv_day):
    term, user = kv_day
    sign_in_from_the_listing(page)
    word = page.locator(".paper__abstract a.term", has_text="KV cache")
    # Tab through the page to the word: its popover opens on focus.
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('.paper__abstract a.term')"):
            break
    else:
        pytest.fail("Tab never reached the highlighted word")
    popover = page.locator(".term-pop")
    buy = popover.get_by_role("button", name=re.compile(r"^Buy 3 shares"))
    buy.wait_for()
    # Tab goes into the popover (Buy 1, then Buy 3), Enter confirms.
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert buy.evaluate("button => button === document.activeElement")
    page.keyboard.press("Enter")
    bought(page, term, user)
    assert word.count() == 1


def test_tab_leaves_the_popover_to_what_follows_the_word(page, kv_day):
    sign_in_from_the_listing(page)
    word = page.locator(".paper__abstract a.term", has_text="KV cache")
    word.focus()
    popover = page.locator(".term-pop")
    popover.get_by_role("button", name=re.compile(r"^Buy 1 share ")).wait_for()
    links = popover.locator("button:not([disabled]), a[href]").count()
    for _ in range(links + 1):
        page.keyboard.press("Tab")
    popover.wait_for(state="hidden")
    assert not page.evaluate("document.activeElement.closest('.term-pop')")
    word.focus()
    popover.wait_for(state="visible")
    page.keyboard.press("Escape")
    popover.wait_for(state="hidden")
    assert page.evaluate("document.activeElement.matches('a.term')")


def test_signed_out_the_popover_says_how_to_start_and_comes_back(page, kv_day):
    page.goto(LISTING)
    page.locator(".paper__abstract a.term", has_text="KV cache").hover()
    popover = page.locator(".term-pop")
    popover.get_by_text(re.compile(r"Log in or sign up to trade “KV cache”")).wait_for()
    assert not popover.get_by_role("button").count()
    popover.get_by_role("link", name="sign up").click()
    page.get_by_label("Username").fill("grace")
    page.get_by_label("Email").fill("grace@example.org")
    page.get_by_label("Password", exact=True).fill("a long unusual passphrase")
    page.get_by_label("Password confirmation").fill("a long unusual passphrase")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(f"**{LISTING}")
    nav = page.locator(".site-nav")
    for name in ("Portfolio", "Saved searches", "Watching"):
        assert nav.get_by_role("link", name=name).count() == 1, name
