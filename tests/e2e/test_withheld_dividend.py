"""In a browser at 390 and 1280 px, light and dark: a verified author sees the dividend withheld
from their own paper explained (its window too) and listed on their trader page, and the rules
page's rulebook fits the phone with its examples marked."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from django.test import override_settings

from authorship.models import Claim
from market.dividends import pay_dividends_for_day
from market.models import Term
from papers.models import Paper
from tests.e2e.sessions import signed_in
from tests.e2e.test_layout import DESKTOP, PHONE, market_day
from tests.factories import buy, list_paper, make_paper

__all__ = ["market_day"]  # the fixture, imported for these tests

pytestmark = pytest.mark.django_db(transaction=True)

PROBLEMS = (Path(__file__).parent / "js" / "layout_problems.js").read_text(encoding="utf-8")
NY = ZoneInfo("America/New_York")
DAY = dt.date(2026, 11, 25)


@pytest.fixture
def withheld(market_day, cs_dc, rival_reader):
    kv: Term = market_day["kv"]
    trader = market_day["trader"]
    Term.objects.filter(pk=kv.pk).update(listed_at=dt.datetime(2026, 11, 1, tzinfo=NY))
    paper = make_paper(
        arxiv_id="2611.00042", title="Paging the KV cache", abstract="We page it to disk."
    )
    Paper.objects.filter(pk=paper.pk).update(
        submitted_at=dt.datetime(2026, 11, 23, 16, 0, tzinfo=NY)
    )
    list_paper(paper, category=cs_dc, date=DAY)
    Claim.objects.create(user=trader, paper=paper, status=Claim.Status.APPROVED)
    buy(rival_reader, kv, 4, when=dt.datetime(2026, 11, 20, 9, 0, tzinfo=NY))
    # The trader's shares, bought in the fixture, dated before the window as well.
    kv.trades.filter(account__user=trader).update(
        created_at=dt.datetime(2026, 11, 19, 9, 0, tzinfo=NY)
    )
    with override_settings(MARKET_DIVIDEND_PER_MENTION=50_000):
        pay_dividends_for_day(category=cs_dc, date=DAY)
    return kv, paper


@pytest.fixture
def rival_reader(django_user_model):
    return django_user_model.objects.create_user("rosa")


def _shot(name: str, viewport: dict, scheme: str) -> Path:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}-{viewport['width']}-{scheme}.png"


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_an_author_sees_the_withheld_dividend_explained(
    browser, live_server, withheld, viewport, scheme
):
    kv, paper = withheld
    context, page = signed_in(browser, live_server, viewport, color_scheme=scheme)
    try:
        page.goto(f"/market/{kv.slug}/why/{paper.arxiv_id}/")
        withheld_line = page.locator(".why__withheld")
        assert withheld_line.is_visible()
        assert "held by the paper's verified authors earned nothing" in withheld_line.inner_text()
        window = page.locator(".why__window").inner_text()
        assert "Mon 23 Nov 2026, 16:00 (the paper's submission)" in window
        assert page.evaluate(PROBLEMS) == []
        page.screenshot(path=str(_shot("why-withheld", viewport, scheme)), full_page=True)

        page.goto("/traders/tobias/")
        section = page.locator(
            "section", has=page.get_by_role("heading", name="Dividends withheld")
        )
        assert "Paging the KV cache" in section.inner_text()
        assert page.evaluate(PROBLEMS) == []

        page.goto("/market/rules/")
        rulebook = page.locator(".rulebook")
        assert rulebook.locator("mark").count() > 10
        assert page.evaluate(PROBLEMS) == []
        page.locator("#rule-formulas").screenshot(
            path=str(_shot("rulebook-formulas", viewport, scheme))
        )
        page.screenshot(path=str(_shot("rules", viewport, scheme)), full_page=True)
    finally:
        context.close()
