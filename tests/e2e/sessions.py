"""Signing in as the browser tests' readers do: through the site's own form, in a new browser
context (its own cookies), so every test starts from the same signed-in page."""

from __future__ import annotations

from typing import Any

from tests.conftest import PASSWORD


def log_in(page, username: str = "tobias") -> None:
    """Fill and send the sign-in form (``/accounts/login/``), and wait for the page after it."""
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.locator("main").get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def signed_in(browser, live_server, viewport: dict[str, int], **options: Any) -> tuple[Any, Any]:
    """A new context at ``viewport`` (``options``: Playwright's, such as ``color_scheme``),
    signed in as tobias: the context, to close, and its page."""
    context = browser.new_context(base_url=live_server.url, viewport=viewport, **options)
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page)
    return context, page
