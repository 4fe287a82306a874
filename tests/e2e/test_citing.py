"""A reader cites a paper from its page with the keyboard alone, on a phone in dark mode: the
Cite control opens, its button copies the BibTeX the page shows, and nothing of it is hidden
sideways or fails axe."""

from __future__ import annotations

import pytest

from tests.e2e.audits import axe_violations, prepare_axe
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_layout import PHONE
from tests.factories import make_paper

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_keyboard_reader_copies_the_bibtex_on_a_phone_in_dark_mode(browser, live_server, cs_dc):
    paper = make_paper(
        title="A very long title about consensus that wraps on a narrow screen " * 3,
        authors=["Ada Lovelace", "Kurt Gödel", "Barbara Liskov"],
    )
    context = browser.new_context(base_url=live_server.url, viewport=PHONE, color_scheme="dark")
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    prepare_axe(context)
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        # The live server's first page pays for its imports, slow on a busy machine.
        page.goto(paper.get_absolute_url(), timeout=60_000)
        summary = page.locator(".cite summary")
        summary.focus()
        page.keyboard.press("Enter")
        shown = page.locator(".cite__bibtex")
        assert shown.is_visible()
        page.keyboard.press("Tab")
        copy = page.get_by_role("button", name="Copy BibTeX")
        assert copy.evaluate("button => button === document.activeElement")
        page.keyboard.press("Enter")
        page.get_by_role("status").filter(has_text="Copied to the clipboard.").wait_for()
        copied = page.evaluate("() => navigator.clipboard.readText()")
        assert copied == shown.text_content()
        assert copied.startswith(f"@misc{{{paper.arxiv_id},")
        widest = page.evaluate("() => document.documentElement.scrollWidth")
        assert widest <= PHONE["width"]
        assert not axe_violations(page, where="paper, cite open")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(".cite").screenshot(path=str(SCREENSHOTS / "cite-390-dark.png"))
    finally:
        context.close()
