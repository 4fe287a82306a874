"""A new trader's first day, in a real browser: sign up, read, follow a word, buy it, sell it."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from market.models import Term
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)


def test_sign_up_follow_a_highlighted_word_buy_and_sell(page, screenshot, cs_dc):
    Term.objects.create(phrase="KV cache", description="Attention keys and values, **cached**.")
    list_paper(
        make_paper(
            arxiv_id="2611.00042",
            title="Paging the attention state",
            abstract="We page the KV cache of $n$ concurrent requests with $O(\\log n)$ "
            "overhead per token.",
        ),
        category=cs_dc,
        date=dt.date(2026, 11, 27),
    )

    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill("grace")
    page.get_by_label("Email").fill("grace@example.org")
    page.get_by_label("Password", exact=True).fill("a long unusual passphrase")
    page.get_by_label("Password confirmation").fill("a long unusual passphrase")
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url("**/portfolio/")
    assert "1,000.00 credits" in page.locator("main").inner_text()
    screenshot("trading-1-new-portfolio")

    page.goto("/list/cs.DC/")
    word = page.locator("a.term", has_text="KV cache")
    word.hover()
    popover = page.locator(".term-pop")
    popover.get_by_text("1.00 credits a share").wait_for()
    screenshot("trading-2-category-page")
    word.click()
    page.wait_for_url("**/market/kv-cache/")
    assert page.locator("h1").inner_text() == "KV cache"

    page.get_by_label("Shares").fill("5")
    page.get_by_role("button", name="Get a quote").click()
    page.wait_for_url(re.compile(r".*/market/kv-cache/quote/.*"))
    screenshot("trading-3-quote")
    confirm = page.get_by_role("button", name=re.compile(r"Confirm: buy 5 for"))
    confirm.click()
    page.wait_for_url("**/market/kv-cache/")
    assert "Bought 5 shares of KV cache" in page.locator(".messages").inner_text()

    page.goto("/portfolio/")
    holdings = page.locator("main").inner_text()
    assert "KV cache" in holdings
    screenshot("trading-4-portfolio-with-holding")

    page.goto("/market/kv-cache/")
    page.get_by_role("radio", name="Sell").check()
    page.get_by_label("Shares").fill("5")
    page.get_by_role("button", name="Get a quote").click()
    page.get_by_role("button", name=re.compile(r"Confirm: sell 5 for")).click()
    page.wait_for_url("**/market/kv-cache/")
    assert "Sold 5 shares of KV cache" in page.locator(".messages").inner_text()
    screenshot("trading-5-after-sale")

    from django.contrib.auth import get_user_model

    from market import trading

    grace = get_user_model().objects.get(username="grace")
    term = Term.objects.get(slug="kv-cache")
    assert trading.holding(grace, term) == 0
    # Bought at 1.00–1.04 and sold back at the same curve: only the two fees are lost.
    assert 999_000_000 < trading.balance(grace) < 1_000_000_000
