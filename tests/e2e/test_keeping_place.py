"""Acting on a paper deep in a list keeps the reader's place: after a save, a popover buy, a tag
change, a follow and an order cancel the page comes back at the same paper (or order, or box),
with the focus on the control used; without JavaScript, at the same paper. And the keyboard
alone gets through the popover (Escape once, Tab on to what follows), the star and an order."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.contrib.auth import get_user_model

from library import saves
from market import trading
from market.models import Order, Term
from papers.models import Paper
from tests.conftest import PASSWORD
from tests.e2e.sessions import signed_in
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

LISTING = "/list/cs.DC/"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
TENTH = "2611.00010"


@pytest.fixture
def long_day(cs_dc):
    """Twelve short papers on one day, the tenth of them mentioning the KV cache: far below the
    top of the page on a phone and on a desktop."""
    term = Term.objects.create(phrase="KV cache")
    for n in range(1, 13):
        words = "the KV cache of concurrent requests" if n == 10 else "replicated logs"
        list_paper(
            make_paper(
                arxiv_id=f"2611.{n:05d}",
                title=f"Paging study number {n}",
                abstract=f"We measure {words} under load, part {n}.",
            ),
            category=cs_dc,
            date=dt.date(2026, 11, 27),
        )
    user = get_user_model().objects.create_user("tobias", "tobias@example.org", PASSWORD)
    return term, user


def focused(page) -> dict:
    """What has the focus: its text, its paper's id and whether it is in the window."""
    return page.evaluate(
        """() => {
          const el = document.activeElement;
          const box = el.getBoundingClientRect();
          const paper = el.closest('li.paper, li.order, form[id]');
          return {
            tag: el.tagName.toLowerCase(), text: el.textContent.trim(),
            label: el.getAttribute('aria-label') || '', name: el.getAttribute('name') || '',
            place: paper ? paper.id : null,
            visible: box.top >= 0 && box.bottom <= innerHeight,
          };
        }"""
    )


def paper_in_view(page, paper_id: str) -> bool:
    return page.evaluate(
        """(id) => {
          const box = document.getElementById(id).getBoundingClientRect();
          return box.top >= -1 && box.top < innerHeight / 2;
        }""",
        paper_id,
    )


def wait_for_focus_settled(page) -> None:
    # place.js restores the focus after load; a focused element that is not <body> is its work.
    page.wait_for_function("document.activeElement && document.activeElement !== document.body")


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_a_save_deep_in_the_list_comes_back_to_the_paper_with_the_star_focused(
    browser, live_server, long_day, viewport
):
    context, page = signed_in(browser, live_server, viewport)
    try:
        page.goto(LISTING)
        star = page.locator(f"[id='{TENTH}'] .star__button")
        star.scroll_into_view_if_needed()
        assert page.evaluate("scrollY") > 600
        star.click()
        page.wait_for_url(f"**{LISTING}#{TENTH}")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == TENTH and now["text"] == "★ Saved" and now["visible"], now
        assert page.evaluate("scrollY") > 600
        assert paper_in_view(page, TENTH)
        assert Paper.objects.get(arxiv_id=TENTH).saves.filter(user__username="tobias").exists()
    finally:
        context.close()


def test_without_javascript_a_save_still_comes_back_to_the_paper(browser, live_server, long_day):
    context, page = signed_in(browser, live_server, PHONE, java_script_enabled=False)
    try:
        page.goto(LISTING)
        page.locator(f"[id='{TENTH}'] .star__button").click()
        page.wait_for_url(f"**{LISTING}#{TENTH}")
        page.wait_for_load_state()
        assert page.evaluate("scrollY") > 600
        assert paper_in_view(page, TENTH)
        assert page.locator(f"[id='{TENTH}'] .star__button").inner_text() == "★ Saved"
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_a_popover_buy_deep_in_the_list_comes_back_to_the_word(
    browser, live_server, long_day, viewport, scheme
):
    term, user = long_day
    context, page = signed_in(browser, live_server, viewport, color_scheme=scheme)
    try:
        page.goto(LISTING)
        word = page.locator(f"[id='{TENTH}'] a.term")
        word.scroll_into_view_if_needed()
        word.hover()
        buy = page.locator(".term-pop").get_by_role("button", name=re.compile(r"^Buy 1 share "))
        buy.click()
        page.wait_for_url(f"**{LISTING}#{TENTH}")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == TENTH and now["text"] == "KV cache" and now["visible"], now
        assert paper_in_view(page, TENTH)
        # Coming back from the trade is not pointing at the word: no popover over the page.
        assert page.locator(".term-pop:visible").count() == 0
        # What happened is said under the paper, in sight, not at the top of the page.
        said = page.locator(f"[id='{TENTH}'] .messages")
        assert said.inner_text().startswith("Bought 1 share of KV cache for ")
        assert page.evaluate(
            "(el) => el.getBoundingClientRect().bottom <= innerHeight", said.element_handle()
        )
        page.screenshot(path=_shot(f"place-after-popover-buy-{viewport['width']}-{scheme}"))
        assert trading.holding(user, term) == 1
    finally:
        context.close()


def test_a_tag_change_deep_in_the_library_comes_back_to_the_paper(browser, live_server, long_day):
    _, user = long_day
    for paper in Paper.objects.order_by("arxiv_id"):
        saves.save(user=user, paper=paper)
    context, page = signed_in(browser, live_server, PHONE)
    try:
        page.goto("/library/")
        entry = page.locator(f"[id='{TENTH}']")
        tags = entry.get_by_label("Tags")
        tags.scroll_into_view_if_needed()
        assert page.evaluate("scrollY") > 400
        tags.fill("paging, to read")
        tags.press("Enter")
        page.wait_for_url(f"**/library/#{TENTH}")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == TENTH and now["name"] == "tags" and now["visible"], now
        assert paper_in_view(page, TENTH)
        assert entry.get_by_label("Tags").input_value() == "paging, to read"
        assert entry.locator(".messages").inner_text() == "Tags saved: paging, to read."
    finally:
        context.close()


def test_an_order_cancel_and_a_follow_come_back_to_their_place(browser, live_server, long_day):
    term, user = long_day
    for n in range(6):
        trading.place_order(
            user=user, term=term, side="buy", shares=2 + n, limit_price=500_000, key=f"o{n}"
        )
    last = Order.objects.filter(account__user=user).order_by("pk").first()
    assert last is not None
    context, page = signed_in(browser, live_server, PHONE)
    try:
        page.goto("/portfolio/")
        cancel = page.locator(f"#order-{last.pk}").get_by_role("button", name=re.compile("^Cancel"))
        cancel.scroll_into_view_if_needed()
        cancel.click()
        page.wait_for_url(f"**/portfolio/#order-{last.pk}")
        wait_for_focus_settled(page)
        now = focused(page)
        # The Cancel button is gone with the order's wait: its row has the focus.
        assert now["place"] == f"order-{last.pk}" and now["tag"] == "li" and now["visible"], now
        assert "Cancelled" in page.locator(f"#order-{last.pk}").inner_text()

        page.goto("/market/kv-cache/")
        follow = page.get_by_role("button", name="Follow “KV cache”")
        follow.scroll_into_view_if_needed()
        follow.click()
        page.wait_for_url("**/market/kv-cache/#follow")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == "follow" and now["text"] == "Unfollow" and now["visible"], now
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_a_limit_order_comes_back_to_the_order_box(
    browser, live_server, long_day, viewport, scheme
):
    context, page = signed_in(browser, live_server, viewport, color_scheme=scheme)
    try:
        page.goto("/market/kv-cache/")
        page.locator(".order-box summary").click()
        box = page.locator("#order-form")
        box.get_by_label("How many, at most").fill("3")
        box.get_by_label("Limit (credits a share)").fill("0.50")
        place = box.get_by_role("button", name="Place order")
        place.scroll_into_view_if_needed()
        place.click()
        page.wait_for_url("**/market/kv-cache/#order-form")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["text"] == "Place order" and now["visible"], now
        # What was done is said beside the button, not out of sight at the top.
        assert page.locator("#order-form .messages").is_visible()
        assert "waiting for the price" in page.locator("#order-form .messages").inner_text()
        if viewport is PHONE:
            assert page.evaluate("scrollY") > 300  # the box is below the price and the chart
        assert page.locator(".my-orders .order").count() == 1
        page.screenshot(path=_shot(f"order-back-{viewport['width']}-{scheme}"))

        # Refused (a limit no one can read): back at the box too, the reason beside it.
        box.get_by_label("How many, at most").fill("3")
        box.get_by_label("Limit (credits a share)").fill("cheap")
        box.get_by_role("button", name="Place order").click()
        page.wait_for_url("**/market/kv-cache/#order-form")
        wait_for_focus_settled(page)
        assert focused(page)["text"] == "Place order"
        assert "is not an amount of credits" in page.locator("#order-form .messages").inner_text()
    finally:
        context.close()


# The keyboard ---------------------------------------------------------------------------------


def tab_to(page, test: str, limit: int = 120) -> None:
    for _ in range(limit):
        page.keyboard.press("Tab")
        if page.evaluate(test):
            return
    pytest.fail(f"Tab never reached {test}")


def test_the_popover_by_keyboard_escape_once_and_tab_on(browser, live_server, long_day):
    context, page = signed_in(browser, live_server, DESKTOP)
    try:
        page.goto(LISTING)
        tab_to(page, "document.activeElement.matches('a.term')")
        popover = page.locator(".term-pop")
        popover.get_by_role("button", name=re.compile(r"^Buy 1 share ")).wait_for()
        page.keyboard.press("Tab")  # into the popover
        assert page.evaluate("!!document.activeElement.closest('.term-pop')")
        page.keyboard.press("Escape")  # once
        popover.wait_for(state="hidden")
        page.wait_for_timeout(300)  # nothing opens it again behind the reader's back
        assert not popover.is_visible()
        assert page.evaluate("document.activeElement.matches('a.term')")
        # Tab from the word (popover open again on the way) through all its controls, then on:
        # to the link after the word in the page, never to <body> or back to the top.
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Tab")
        popover.get_by_role("button", name=re.compile(r"^Buy 1 share ")).wait_for()
        controls = popover.locator("button:not([disabled]), a[href]").count()
        for _ in range(controls + 1):
            page.keyboard.press("Tab")
        popover.wait_for(state="hidden")
        after = focused(page)
        assert after["place"] == TENTH and after["tag"] == "a", after
        assert after["text"].startswith("arXiv:") or after["text"] == "☆ Save", after
    finally:
        context.close()


def test_holding_tab_through_a_listing_never_drops_to_the_page(browser, live_server, cs_dc):
    Term.objects.create(phrase="KV cache")
    Term.objects.create(phrase="Raft")
    long = " ".join(["Raft keeps replicas consistent under partitions and slow links."] * 9)
    for n in range(1, 4):
        list_paper(
            make_paper(arxiv_id=f"2611.{n:05d}", abstract=f"{long} The KV cache pages state."),
            category=cs_dc,
            date=dt.date(2026, 11, 27),
        )
    context = browser.new_context(base_url=live_server.url, viewport=DESKTOP)
    page = context.new_page()
    try:
        page.goto(LISTING)
        seen = []
        for _ in range(90):  # a held key repeats about every 30 ms
            page.keyboard.press("Tab")
            page.wait_for_timeout(30)
            seen.append(
                page.evaluate(
                    """() => {
                      const el = document.activeElement;
                      const scrolled = [...document.querySelectorAll('.paper__abstract')]
                        .some((a) => a.scrollTop > 0);
                      return el === document.body ? 'body'
                        : scrolled ? 'a scrolled abstract: ' + el.textContent
                        : el.matches('.skip-link') ? 'skip link' : 'ok';
                    }"""
                )
            )
        assert "body" not in seen and not any(s.startswith("a scrolled") for s in seen), seen
        assert seen.count("skip link") <= 1, seen  # once on the way in, never starting over
    finally:
        context.close()


def test_star_and_order_by_keyboard_keep_the_focus(browser, live_server, long_day):
    context, page = signed_in(browser, live_server, PHONE)
    try:
        page.goto(LISTING)
        tab_to(page, f"document.activeElement.matches(\"[id='{TENTH}'] .star__button\")", 200)
        page.keyboard.press("Enter")
        page.wait_for_url(f"**{LISTING}#{TENTH}")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == TENTH and now["text"] == "★ Saved", now

        page.goto("/market/kv-cache/")
        tab_to(page, "document.activeElement.matches('.order-box summary')")
        page.keyboard.press("Enter")
        tab_to(page, "document.activeElement.id === 'order-shares'", 10)
        page.keyboard.type("4")
        tab_to(page, "document.activeElement.id === 'order-limit'", 3)
        page.keyboard.press("Control+A")
        page.keyboard.type("0.50")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        page.wait_for_url("**/market/kv-cache/#order-form")
        wait_for_focus_settled(page)
        now = focused(page)
        # Back in the field Enter was pressed in, the order's message beside the box.
        assert now["name"] == "limit" and now["visible"], now
        assert "waiting for the price" in page.locator("#order-form .messages").inner_text()
        order = Order.objects.get(account__user__username="tobias")
        tab_to(page, "document.activeElement.matches('.my-orders button')")
        page.keyboard.press("Enter")
        page.wait_for_url(f"**/market/kv-cache/#order-{order.pk}")
        wait_for_focus_settled(page)
        now = focused(page)
        assert now["place"] == f"order-{order.pk}" and now["visible"], now
        order.refresh_from_db()
        assert order.state == Order.State.CANCELLED
    finally:
        context.close()


def _shot(name: str) -> str:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return str(SCREENSHOTS / f"{name}.png")
