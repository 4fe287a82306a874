"""Claiming a paper in a real browser, at 390 and 1280 px: the reader claims it from its page
with an ORCID iD, a curator approves it in the admin, and the paper's page shows the verified
author's badge; axe finds nothing on the claim pages and nothing is wider than the screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from authorship.models import Claim
from tests.conftest import PASSWORD
from tests.e2e.audits import axe_violations, prepare_axe
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.sessions import signed_in
from tests.e2e.test_layout import DESKTOP, PHONE, market_day

__all__ = ["market_day"]  # the fixture, imported for these tests

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEMS = (Path(__file__).parent / "js" / "layout_problems.js").read_text(encoding="utf-8")
PAPER = "/abs/2611.00001/"


def checked(page, where: str) -> list[str]:
    """axe's findings and the layout's problems on the page as it is now."""
    return axe_violations(page, where=where) + [f"{where}: {p}" for p in page.evaluate(PROBLEMS)]


def approve_in_the_admin(browser, live_server, viewport) -> None:
    get_user_model().objects.create_superuser("cora", "cora@example.org", PASSWORD)
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        page.goto("/admin/login/")
        page.get_by_label("Username").fill("cora")
        page.get_by_label("Password").fill(PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        page.goto("/admin/authorship/claim/?status__exact=pending")
        page.locator("input.action-select").first.check()
        page.locator("select[name=action]").select_option("approve")
        page.get_by_role("button", name="Go").click()
        page.get_by_text("Approved 1 claim.").wait_for()
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_claim_a_paper_and_see_the_badge_after_approval(browser, live_server, market_day, viewport):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    width = viewport["width"]
    context, page = signed_in(browser, live_server, viewport)
    prepare_axe(context)
    try:
        found: list[str] = []
        # The paper page's first request asks for its similar papers, and tasks run eagerly
        # here: the text model is fitted in the request (26 s on the shared test machine).
        # That is not what this test is about, so it is asked for before the clock matters.
        page.request.get(PAPER, timeout=120_000)
        page.goto(PAPER)
        assert not page.locator(".verified-authors").count()
        page.get_by_role("link", name="Are you an author? Claim this paper").click()
        page.get_by_label("ORCID iD").wait_for()
        assert page.get_by_role("checkbox").first.is_checked()
        found += checked(page, "claim form")
        page.get_by_label("ORCID iD").fill("0000-0002-1825-0098")  # one digit off
        page.get_by_role("button", name="Claim").click()
        page.get_by_text("does not check out").wait_for()
        found += checked(page, "claim form with an error")
        page.screenshot(path=str(SCREENSHOTS / f"claim-form-error-{width}.png"), full_page=True)
        page.get_by_label("ORCID iD").fill("0000-0002-1825-0097")
        page.get_by_label("Note for the curator").fill("My group's page lists this paper.")
        page.get_by_role("button", name="Claim").click()
        page.get_by_text("Claimed 1 paper: a curator will review it.").wait_for()
        assert page.get_by_text("Pending review").count()
        found += checked(page, "claims page")
        page.screenshot(path=str(SCREENSHOTS / f"claims-pending-{width}.png"), full_page=True)

        approve_in_the_admin(browser, live_server, viewport)
        assert Claim.objects.get().status == "approved"

        page.goto(PAPER)
        badge = page.locator(".verified-authors")
        assert badge.get_by_text("✓ Verified author").is_visible()
        assert badge.get_by_role("link", name="tobias").get_attribute("href") == "/traders/tobias/"
        found += checked(page, "paper with its verified author")
        page.screenshot(path=str(SCREENSHOTS / f"claim-badge-{width}.png"), full_page=True)
        page.goto("/claims/")
        assert page.get_by_text("Approved").first.is_visible()
        page.goto("/traders/tobias/")
        assert page.get_by_role("heading", name="Verified papers").is_visible()
        found += checked(page, "trader page with verified papers")
        assert not found, "\n".join(found)
    finally:
        context.close()
