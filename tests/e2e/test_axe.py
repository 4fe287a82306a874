"""axe-core finds no critical, serious or moderate violation on the pages a reader and a trader
use, at 390 and 1280 px, light and dark, signed out and signed in, nor with a word's price
popover open or the term page's limit-order form open.

One browser context per width, scheme and reader, with axe loaded into every page it opens, so
the whole matrix costs eight contexts; every violation is listed with its nodes on failure.
"""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from library import hot, saves
from market import orders
from market.models import Term
from papers.models import Paper
from tests.e2e.audits import axe_violations, prepare_axe
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.sessions import signed_in
from tests.e2e.test_layout import DESKTOP, PHONE, market_day

__all__ = ["market_day"]  # the fixture, imported for these tests

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = {
    "list": "/list/cs.DC/",
    "paper": "/abs/2611.00001/",
    "search": "/search/?q=raft",
    "author": "/author/Ada%20Lovelace/",
    "market": "/market/",
    "term": "/market/kv-cache/",
    "rules": "/market/rules/",
    "leaderboard": "/leaderboard/",
    "hot": "/hot/?period=month",
    "api reference": "/api/v1/reference/",
}
SIGNED_IN_ONLY = {
    "portfolio": "/portfolio/",
    "library": "/library/",
    "recommended": "/recommended/",
    # Beyond issue 38's list: the reader's other own pages and a trader's public one.
    "front": "/",
    "trader": "/traders/rhea_with_a_rather_long_name/",
    "saved searches": "/searches/",
    "settings": "/accounts/settings/",
    "api tokens": "/accounts/settings/tokens/",
}
SIGNED_OUT_ONLY = {
    "signup": "/accounts/signup/",
    "login": "/accounts/login/",
}


@pytest.fixture
def full_market(market_day):
    """``market_day``, plus what the reader's own pages show: saved and tagged papers (so the
    library and Hot have rows) and a waiting limit order (the term page's order list)."""
    trader = market_day["trader"]
    papers = list(Paper.objects.order_by("arxiv_id"))
    for paper in papers[:2]:
        saves.save(user=trader, paper=paper)
    saves.set_tags(user=trader, paper=papers[0], names=["consensus", "to read"])
    rival = get_user_model().objects.get(username="rhea_with_a_rather_long_name")
    saves.save(user=rival, paper=papers[0])
    hot.refresh()
    orders.place_order(
        user=trader,
        term=Term.objects.get(phrase="KV cache"),
        side="buy",
        shares=4,
        limit_price=10_000,  # a hundredth of a credit: it waits
        expires_at=None,
        key="waiting",
    )
    return market_day


def _open_popover(page) -> None:
    """Point at the first highlighted word and wait for its price (and, signed in, its
    offers) to fill the popover."""
    page.locator(".paper__abstract a.term").first.hover()
    popover = page.locator(".term-pop")
    popover.get_by_text("a share").first.wait_for()
    if page.get_by_role("button", name="Log out").count():
        popover.locator(".term-pop__offer button").first.wait_for()


def _audit(page, name: str, path: str, *, shot: str) -> list[str]:
    response = page.goto(path)
    assert response is not None and response.status == 200, path
    found = axe_violations(page, where=name)
    if name == "list":
        _open_popover(page)
        found += axe_violations(page, where="list, popover open")
        page.screenshot(path=str(SCREENSHOTS / f"axe-list-popover-{shot}.png"))
    if name == "term" and page.locator(".order-box").count():
        # Open already when the trader has orders here: a click would close it.
        if not page.locator(".order-box[open]").count():
            page.locator(".order-box summary").click()
        page.get_by_role("button", name="Place order").wait_for()
        found += axe_violations(page, where="term, order form open")
        page.locator(".trade-box").screenshot(path=str(SCREENSHOTS / f"axe-term-order-{shot}.png"))
    return found


@pytest.mark.parametrize("reader", [False, True], ids=["signed-out", "signed-in"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_no_serious_or_moderate_axe_violation(
    browser, live_server, full_market, viewport, scheme, reader
):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = f"{viewport['width']}-{scheme}-{'in' if reader else 'out'}"
    if reader:
        context, page = signed_in(browser, live_server, viewport, color_scheme=scheme)
        pages = {**PAGES, **SIGNED_IN_ONLY}
    else:
        context = browser.new_context(
            base_url=live_server.url, viewport=viewport, color_scheme=scheme
        )
        page = context.new_page()
        page.set_default_timeout(10_000)
        pages = {**PAGES, **SIGNED_OUT_ONLY}
    prepare_axe(context)
    try:
        found = []
        for name, path in pages.items():
            found += _audit(page, name, path, shot=shot)
        assert not found, "\n".join([f"{len(found)} violations:", *found])
    finally:
        context.close()


def test_the_audited_pages_have_content(browser, live_server, full_market):
    """The data the audits run on: a listing with highlighted words, a term with holders and
    a waiting order, a library and Hot with papers (an empty page hides most problems)."""
    context, page = signed_in(browser, live_server, DESKTOP)
    try:
        page.goto(PAGES["list"])
        assert page.locator(".paper__abstract a.term").count() >= 3
        page.goto(PAGES["term"])
        assert page.locator(".order-list .order").count() == 1
        page.goto(SIGNED_IN_ONLY["library"])
        assert page.locator("li.paper").count() == 2
        assert page.get_by_role("link", name="to read").count() >= 1
        page.goto(PAGES["hot"])
        assert page.locator("li.paper").count() >= 1
    finally:
        context.close()


def test_axe_finds_planted_violations(page):
    """The audit is live and counts moderate findings too: a linked image without a text
    alternative (critical) and a heading that skips levels (moderate) are both reported."""
    prepare_axe(page.context)
    page.goto("/market/rules/")
    page.evaluate(
        "html => document.querySelector('main').insertAdjacentHTML('beforeend', html)",
        '<h5>Fine print</h5><a href="/"><img src="/static/favicon.svg"></a>',
    )
    found = " ".join(axe_violations(page, where="rules"))
    assert "link-name (serious)" in found or "image-alt (critical)" in found, found
    assert "heading-order (moderate)" in found, found
