"""Every page fits a phone and a desktop, credits read with two decimals, and the prices of
highlighted words show on hover, keyboard focus and tap, in a real browser."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model

from market import networth, trading
from market.models import NetWorthSnapshot, Term
from tests.conftest import PASSWORD
from tests.e2e.sessions import signed_in
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
LONG_ABSTRACT = " ".join(
    ["Raft keeps replicas consistent in partially synchronous networks."]
    + ["We study consensus among replicas under partitions and slow links."] * 8
    + ["Our KV cache design pages attention state under load."]
)


@pytest.fixture
def market_day(cs_dc):
    kv = Term.objects.create(phrase="KV cache")
    raft = Term.objects.create(phrase="Raft", p0=2_000_000, k=50_000)
    for n in range(3):
        list_paper(
            make_paper(
                arxiv_id=f"2611.{n + 1:05d}",
                title=f"Raft under partitions, part {n + 1}",
                abstract=LONG_ABSTRACT,
                authors=["Ada Lovelace", "Alan Turing", "Grace Hopper", "Edsger Dijkstra"],
            ),
            category=cs_dc,
            date=dt.date(2026, 11, 26),
        )
    users = get_user_model().objects
    trader = users.create_user("tobias", "tobias@example.org", PASSWORD)
    rival = users.create_user("rhea_with_a_rather_long_name", "rhea@example.org", PASSWORD)
    for n in range(12):
        trading.buy(user=trader, term=kv, shares=3 + n, max_cost=None, key=f"t{n}")
        trading.buy(user=rival, term=raft, shares=2, max_cost=None, key=f"r{n}")
    trading.sell(user=trader, term=kv, shares=5, min_proceeds=None, key="s")
    # Two weeks of daily net worth: the portfolio's chart and the week's leaderboard have data.
    today = networth.today_utc()
    for user, base in ((trader, 1_000_000_000), (rival, 990_000_000)):
        NetWorthSnapshot.objects.bulk_create(
            NetWorthSnapshot(
                account=user.market_account,
                date=today - dt.timedelta(days=days),
                cash=base + days * 3_210_000,
                holdings_value=0,
                net_worth=base + days * 3_210_000,
                granted=1_000_000_000,
            )
            for days in range(1, 15)
        )
    return {"kv": kv, "trader": trader}


PAGES = [
    "/list/cs.DC/",
    "/abs/2611.00001/",
    "/market/",
    "/market/kv-cache/",
    "/market/kv-cache/quote/?side=buy&shares=3",
    "/portfolio/",
    "/leaderboard/",
    "/leaderboard/?period=week",
    "/traders/tobias/",
    "/traders/rhea_with_a_rather_long_name/",
    "/market/rules/",
    "/archive/cs/",
    "/api/v1/reference/",
    "/accounts/settings/tokens/",
]
MONEY_PAGES = [
    "/market/",
    "/market/kv-cache/",
    "/portfolio/",
    "/leaderboard/",
    "/leaderboard/?period=week",
    "/traders/tobias/",
]
AMOUNT = re.compile(r"(?<![\w.%])[−+-]?\d[\d,]*\.\d+(?![\d%])")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_no_page_scrolls_sideways_and_credits_have_two_decimals(
    browser, live_server, market_day, viewport, screenshot
):
    context, page = signed_in(browser, live_server, viewport)
    try:
        for path in PAGES:
            response = page.goto(path)
            assert response.status == 200, path
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, f"{path} is {overflow}px too wide at {viewport['width']}px"
            if path in MONEY_PAGES:
                # Every decimal figure on these pages is an amount of credits (changes are
                # percentages, and the chart's labels are drawn, not text of the page).
                text = page.locator("main").inner_text()
                amounts = AMOUNT.findall(text)
                assert amounts, path
                odd = [a for a in amounts if len(a.split(".")[1]) != 2]
                assert not odd, f"{path}: {odd}"
        name = "phone" if viewport is PHONE else "desktop"
        page.goto("/market/kv-cache/")
        screenshot(f"layout-term-{name}")
        # The header leaves the content near the top, and "Log out" stays on one line.
        # (On a phone the signed-in navigation, with Portfolio, Saved searches, Hot and
        # Library, takes two rows: issues 25 and 26 want them on every page; on a desktop the
        # brand and the navigation are one row each. On a phone the banner also says what a
        # highlighted word is, "tap for its price", one line of its own, and the search box:
        # issue 38, 156 px in all at 390 px, from 182.)
        assert page.locator("main").bounding_box()["y"] <= (165 if viewport is PHONE else 140)
        log_out = page.get_by_role("button", name="Log out").bounding_box()
        assert log_out["height"] < 30
    finally:
        context.close()


def test_the_leaderboard_shows_gain_and_net_worth_on_a_phone(browser, live_server, market_day):
    context, page = signed_in(browser, live_server, PHONE)
    try:
        page.goto("/leaderboard/")
        for heading in ("Gain", "Net worth"):
            box = page.get_by_role("columnheader", name=heading).bounding_box()
            assert box and box["x"] + box["width"] <= PHONE["width"], heading
    finally:
        context.close()


def test_a_price_popover_on_hover_and_on_keyboard_focus(page, market_day):
    page.goto("/list/cs.DC/")
    word = page.locator(".paper__abstract a.term", has_text="Raft").first
    word.hover()
    popover = page.locator(".term-pop")
    popover.get_by_text(re.compile(r"^\d+\.\d{2} credits a share$")).wait_for()
    assert popover.get_by_role("link", name="Trade “Raft” →").get_attribute("href") == (
        "/market/raft/"
    )
    assert word.get_attribute("title") is None  # no second, native tooltip
    page.mouse.move(0, 0)
    popover.wait_for(state="hidden")

    word.focus()
    popover.wait_for(state="visible")
    assert word.get_attribute("aria-describedby") == "term-popover"
    page.keyboard.press("Escape")
    popover.wait_for(state="hidden")


def test_a_tap_on_a_phone_opens_the_popover_instead_of_leaving(browser, live_server, market_day):
    context = browser.new_context(
        base_url=live_server.url, viewport=PHONE, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    try:
        page.goto("/list/cs.DC/")
        word = page.locator(".paper__abstract a.term", has_text="Raft").first
        word.tap()
        page.locator(".term-pop").get_by_text("credits a share").wait_for()
        assert page.url.endswith("/list/cs.DC/")
        page.locator(".term-pop a.term-pop__link").tap()
        page.wait_for_url("**/market/raft/")
    finally:
        context.close()


def test_words_hidden_in_a_shortened_abstract_take_no_focus(page, market_day):
    page.goto("/list/cs.DC/")
    abstract = page.locator(".paper__abstract").first
    hidden_word = abstract.locator("a.term", has_text="KV cache")
    assert hidden_word.get_attribute("tabindex") == "-1"
    page.locator(".paper__more summary").first.click()
    page.wait_for_function("el => !el.hasAttribute('tabindex')", arg=hidden_word.element_handle())
