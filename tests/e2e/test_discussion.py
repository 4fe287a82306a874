"""A discussion in a real browser, keyboard only, at 390 and 1280 px, light and dark: comment
with a formula, reply, vote, report, and the writer replied to sees one notice; nothing wider
than the screen, and axe finds nothing serious or moderate on a paper page with a long
thread."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from discussion import writing
from discussion.targets import Target
from tests.conftest import PASSWORD
from tests.e2e.audits import axe_violations, prepare_axe
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_layout import DESKTOP, PHONE
from tests.factories import make_paper

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEMS = (Path(__file__).parent / "js" / "layout_problems.js").read_text(encoding="utf-8")
PAPER = "/abs/2611.00001/"


@pytest.fixture
def long_thread(db):
    paper = make_paper(arxiv_id="2611.00001", title="Consensus with $f < n/3$ faults")
    users = get_user_model().objects
    joined = timezone.now() - dt.timedelta(days=30)
    users.create_user("tobias", "tobias@example.org", PASSWORD, date_joined=joined)
    rhea = users.create_user("rhea", "rhea@example.org", PASSWORD, date_joined=joined)
    target = Target("paper", paper.pk)
    for n in range(60):
        top = writing.post(
            user=rhea,
            target=target,
            body=f"Point {n}: is $\\sum_{{i=1}}^{{n}} x_i \\leq f$ *tight*? > quoted\n\n- a list",
            key=f"t{n}",
        )
        if n % 10 == 0:
            writing.post(user=rhea, target=target, body=f"And {n}", key=f"r{n}", parent_id=top.pk)
    return paper


def sign_in(browser, live_server, viewport, scheme, username):
    context = browser.new_context(base_url=live_server.url, viewport=viewport, color_scheme=scheme)
    prepare_axe(context)
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Password").press("Enter")
    page.wait_for_load_state()
    return context, page


def press(locator, key: str = "Enter") -> None:
    """Reach a control as the keyboard does (focus) and use it with a key, never a click."""
    locator.focus()
    locator.page.keyboard.press(key)
    locator.page.wait_for_load_state()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_talk_about_a_paper_with_the_keyboard(browser, live_server, long_thread, viewport, scheme):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = f"{viewport['width']}-{scheme}"
    context, page = sign_in(browser, live_server, viewport, scheme, "tobias")
    try:
        page.goto(PAPER)
        found = axe_violations(page, where="paper with a long thread")
        assert not found, "\n".join(found)
        assert page.evaluate(PROBLEMS) == []

        box = page.get_by_label("Add a comment")
        box.focus()
        page.keyboard.type("Is $x^2 \\leq n$ the bound?")
        page.keyboard.press("Tab")  # to the help text's link-free paragraph: then the button
        press(page.locator(".discussion__form").get_by_role("button", name="Post comment"))
        mine = page.locator("article.comment", has_text="the bound?")
        mine.wait_for()
        assert mine.locator("math").count() == 1
        page.screenshot(path=str(SCREENSHOTS / f"discussion-posted-{shot}.png"))
        page.goto(PAPER)  # the new comment, with no votes, is on the second page

        first = page.locator("article.comment", has_text="Point 0:").first
        press(first.get_by_role("button", name="▲ Upvote"))
        first = page.locator("article.comment", has_text="Point 0:").first
        # The vote is a form: wait for the page it comes back to.
        first.get_by_role("button", name="▲ Upvoted").wait_for()
        assert first.get_by_role("button", name="▲ Upvoted").count() == 1

        press(first.locator("summary", has_text="Reply"))
        first.get_by_label("Your reply").focus()
        page.keyboard.type("A reply with $\\alpha$")
        press(first.get_by_role("button", name="Post reply"))
        page.locator("article.comment", has_text="A reply with").wait_for()

        other = page.locator("article.comment", has_text="Point 1:").first
        press(other.locator("summary", has_text="Report"))
        reason = other.get_by_label("Why?")
        reason.focus()
        page.keyboard.press("ArrowDown")
        press(other.get_by_role("button", name="Send report"))
        # The report is a form: wait for the page it comes back to, with its message.
        page.get_by_text("curators will look").first.wait_for()
        assert "curators will look" in page.locator("body").inner_text()

        found = axe_violations(page, where="paper after posting")
        assert not found, "\n".join(found)
        assert page.evaluate(PROBLEMS) == []
        page.screenshot(path=str(SCREENSHOTS / f"discussion-thread-{shot}.png"), full_page=True)
    finally:
        context.close()

    context, page = sign_in(browser, live_server, viewport, scheme, "rhea")
    try:
        # The first page after signing in tells what happened meanwhile, once.
        assert "1 reply to you" in page.locator("body").inner_text()
        page.screenshot(path=str(SCREENSHOTS / f"discussion-notice-{shot}.png"))
    finally:
        context.close()
