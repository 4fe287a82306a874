"""The rules page: the market explained with the real numbers, from one Markdown source."""

from __future__ import annotations

import pytest

from market import curve
from market.models import DEFAULT_K, DEFAULT_P0
from market.views import rules
from tests.html import page_text

pytestmark = pytest.mark.django_db


def test_rules_page_explains_the_market_with_the_real_numbers(client, db):
    text = page_text(client.get("/market/rules/"))
    assert "Every new account starts with 1,000.00 credits." in text
    assert "The first share costs 1.00 credits" in text and "0.01 credits dearer" in text
    cost = curve.cost(0, 10, p0=DEFAULT_P0, k=DEFAULT_K)
    fee = curve.fee(cost, basis_points=100)
    assert cost == 10_450_000 and fee == 104_500
    assert "Buying 10 shares costs 10.45 credits" in text
    assert "The fee is 0.10 credits, so you pay 10.55 credits." in text
    assert "a fee of 1% of the amount" in text
    assert "pays 0.05 credits for each share" in text
    # The counting rules, from the one Markdown source the matcher's docstring points to.
    assert "How mentions are counted" in text
    for rule in ("Case does not matter", "Whole words only", "Plurals count", "Aliases"):
        assert rule in text
    assert "compiled matcher" not in text
    # Every placeholder was filled (a "$" left is a formula in a rulebook example, in TeX).
    assert "**" not in text
    assert not [name for name in rules.rules_values() if f"${name}" in text]


def test_rules_page_follows_the_settings(client, settings, db):
    settings.MARKET_FEE_BASIS_POINTS = 250
    settings.MARKET_DIVIDEND_PER_MENTION = 120_000
    settings.MARKET_STARTING_GRANT = 500_000_000
    text = page_text(client.get("/market/rules/"))
    assert "a fee of 2.5% of the amount" in text
    assert "pays 0.12 credits for each share" in text
    assert "Every new account starts with 500.00 credits." in text


def test_the_rules_page_has_one_markdown_source():
    source = rules.RULES_FILE.read_text(encoding="utf-8")
    assert "A paper mentions a term" in source and "$rulebook" in source
    assert "A paper mentions a term" in rules.rules_markdown()
