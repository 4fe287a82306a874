"""Nothing is wider than the viewport, and no table scrolls sideways with cells or controls
hidden, on every page a newcomer visits, at 390 and 1280 px, light and dark; the header's search
box shows on each, and the small parts of a phone's pages sit neatly."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.sessions import signed_in
from tests.e2e.test_layout import DESKTOP, PHONE, market_day

__all__ = ["market_day"]  # the fixture, imported for these tests

pytestmark = pytest.mark.django_db(transaction=True)

# Elements past the viewport's edges (outside a scroll box), and scroll boxes that hide cells
# or controls beyond their visible part: one message each.
PROBLEMS = (Path(__file__).parent / "js" / "layout_problems.js").read_text(encoding="utf-8")

PAGES = {
    "list": "/list/cs.DC/",
    "paper": "/abs/2611.00001/",
    "search": "/search/?q=raft",
    "author": "/author/Ada%20Lovelace/",
    "market": "/market/",
    "term": "/market/kv-cache/",
    "portfolio": "/portfolio/",
    "leaderboard": "/leaderboard/",
    "trader": "/traders/tobias/",
    "library": "/library/",
    "recommended": "/recommended/",
    "hot": "/hot/?period=month",
}


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_every_page_fits_without_hidden_columns(browser, live_server, market_day, viewport, scheme):
    context, page = signed_in(browser, live_server, viewport, color_scheme=scheme)
    try:
        found = {}
        for name, path in PAGES.items():
            response = page.goto(path)
            assert response.status == 200, path
            problems = page.evaluate(PROBLEMS)
            if not page.locator("#site-search-q").is_visible():
                problems = [*problems, "the header's search box is hidden"]
            if problems:
                found[path] = problems[:3]
            page.screenshot(path=str(_shot(name, viewport, scheme)), full_page=True)
        assert not found, found
    finally:
        context.close()


def _shot(name: str, viewport: dict, scheme: str) -> Path:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"newcomer-{name}-{viewport['width']}-{scheme}.png"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_phone_searches_from_the_header_of_any_page(browser, live_server, market_day, scheme):
    context, page = signed_in(browser, live_server, PHONE, color_scheme=scheme)
    try:
        page.goto("/abs/2611.00002/")
        box = page.get_by_role("search").get_by_label("Search papers")
        found = box.bounding_box()
        # The row's whole width, one tap from the top of the page.
        assert found and found["width"] >= PHONE["width"] / 2 and found["y"] < 200, found
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        page.screenshot(path=str(_shot("header-search", PHONE, scheme)))
        box.click()
        box.fill("raft")
        box.press("Enter")
        page.wait_for_url("**/search/?q=raft")
        assert page.locator("li.paper").count() == 3
    finally:
        context.close()


def test_the_search_dates_the_star_and_the_hot_link_sit_neatly_on_a_phone(
    browser, live_server, market_day
):
    context, page = signed_in(browser, live_server, PHONE)
    try:
        page.goto("/search/?q=raft")
        since, until = (page.get_by_label(name, exact=True) for name in ("Announced from", "to"))
        since_box, until_box = since.bounding_box(), until.bounding_box()
        assert since_box and until_box and since_box["y"] == until_box["y"]  # one row
        labels = [
            page.locator(f"label[for={f}]").bounding_box() for f in ("search-since", "search-until")
        ]
        assert labels[0]["y"] == labels[1]["y"]
        page.goto("/abs/2611.00001/")
        search_row = page.locator(".site-search").bounding_box()
        star = page.locator("main > .star").bounding_box()
        assert star["y"] - (search_row["y"] + search_row["height"]) >= 12  # room to breathe
        page.goto("/list/cs.DC/")
        # In the navigation's type, like the breadcrumb and the site's links, not the text's.
        style = "el => [getComputedStyle(el).fontFamily, getComputedStyle(el).textDecorationLine]"
        hot = page.get_by_role("link", name="Hot in cs.DC").evaluate(style)
        nav = page.locator(".site-nav a").first.evaluate(style)
        assert hot == nav, (hot, nav)
    finally:
        context.close()


def test_a_phone_says_what_the_highlighted_words_are(browser, live_server, market_day):
    """There is no hover on a phone: the line under the header says to tap a highlighted word,
    where a desktop keeps its tagline (and its search box beside it)."""
    for viewport, tap in ((PHONE, True), (DESKTOP, False)):
        context = browser.new_context(base_url=live_server.url, viewport=viewport)
        try:
            page = context.new_page()
            page.goto("/list/cs.DC/")
            tagline = page.locator(".tagline")
            assert tagline.is_visible()
            text = " ".join(tagline.inner_text().split())
            assert "Highlighted words trade on the market" in text
            assert ("tap for its price" in text) is tap, (viewport, text)
        finally:
            context.close()
