"""The popover on a phone: above the word when there is no room below it (never past the
bottom of the screen), below it otherwise; and its day change coloured as it reads."""

from __future__ import annotations

import datetime as dt
import re
import uuid

import pytest
from django.contrib.auth import get_user_model

from market import trading
from market.models import Term
from tests.conftest import PASSWORD
from tests.e2e.sessions import signed_in
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def risen_day(cs_dc):
    term = Term.objects.create(phrase="KV cache", p0=1_000_000, k=10_000)
    users = get_user_model().objects
    rival = users.create_user("rhea", "rhea@example.org", PASSWORD)
    trading.buy(user=rival, term=term, shares=35, max_cost=None, key=uuid.uuid4().hex)
    for n in range(1, 7):
        list_paper(
            make_paper(
                arxiv_id=f"2611.{n:05d}",
                title=f"Paging study number {n}",
                abstract=f"We page the KV cache of concurrent requests, part {n}.",
            ),
            category=cs_dc,
            date=dt.date(2026, 11, 27),
        )
    users.create_user("tobias", "tobias@example.org", PASSWORD)
    return term


def boxes(page, word) -> dict:
    return page.evaluate(
        """(word) => {
          const w = word.getBoundingClientRect();
          const p = document.querySelector('.term-pop').getBoundingClientRect();
          return {word_top: w.top, word_bottom: w.bottom, top: p.top, bottom: p.bottom,
                  height: innerHeight};
        }""",
        word.element_handle(),
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_near_the_bottom_of_a_phone_the_popover_opens_above_the_word(
    browser, live_server, risen_day, scheme
):
    context, page = signed_in(browser, live_server, PHONE, has_touch=True, color_scheme=scheme)
    try:
        page.goto("/list/cs.DC/")
        popover = page.locator(".term-pop")

        # The last paper's word, brought to the bottom of the screen: the trade box (about 300 px)
        # has no room below it.
        low = page.locator("li.paper a.term").last
        page.evaluate(
            "(el) => window.scrollBy(0, el.getBoundingClientRect().top - (innerHeight - 50))",
            low.element_handle(),
        )
        low.tap()
        popover.get_by_role("button", name=re.compile(r"^Buy 1 share ")).wait_for()
        at = boxes(page, low)
        assert at["bottom"] <= at["word_top"] and at["top"] >= 0, at
        page.screenshot(path=_shot(f"popover-above-390-{scheme}"))

        # The change it shows is coloured as a rise, unlike the price beside it.
        change = popover.locator(".term-pop__change")
        assert change.inner_text() == "+35.0% today"
        colours = page.evaluate(
            """() => [getComputedStyle(document.querySelector('.term-pop__change')).color,
                      getComputedStyle(document.querySelector('.term-pop__price')).color]"""
        )
        assert "change--up" in change.get_attribute("class") and colours[0] != colours[1]

        # A word with room below: the popover opens under it, inside the screen.
        page.mouse.click(5, 5)  # a tap elsewhere closes it
        page.evaluate("window.scrollTo(0, 0)")
        high = page.locator("li.paper a.term").first
        page.evaluate(
            "(el) => window.scrollBy(0, el.getBoundingClientRect().top - 150)",
            high.element_handle(),
        )
        high.tap()
        popover.get_by_role("button", name=re.compile(r"^Buy 1 share ")).wait_for()
        at = boxes(page, high)
        assert at["top"] >= at["word_bottom"] and at["bottom"] <= at["height"], at
    finally:
        context.close()


def _shot(name: str) -> str:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return str(SCREENSHOTS / f"{name}.png")
