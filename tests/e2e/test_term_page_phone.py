"""A term's page at 390 and 1280 px, light and dark, with traders whose names are long: nothing
is wider than the window, no table hides a column sideways in its scroll box, a name wraps only
between its parts, and a single week of mentions is drawn as one slim bar whose legend tells
what is on the chart."""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from market import trading
from market.models import Term
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
PROBLEMS = (Path(__file__).parent / "js" / "layout_problems.js").read_text(encoding="utf-8")
NAMES = [
    "rhea_with_a_rather_long_name",
    "maximilian.bartholomew.von.hohenzollern-sigmaringen@example.org",
    "A" * 60,  # one part longer than any column: the only name that may break inside a part
]


@pytest.fixture
def crowded_term(cs_dc):
    term = Term.objects.create(phrase="KV cache")
    users = get_user_model().objects
    for n, name in enumerate(NAMES):
        user = users.create_user(name, f"t{n}@example.org", "a long unusual passphrase")
        trading.buy(user=user, term=term, shares=3 + n, max_cost=None, key=uuid.uuid4().hex)
    for n in range(1, 4):
        list_paper(
            make_paper(arxiv_id=f"2611.{n:05d}", abstract="We page the KV cache under load."),
            category=cs_dc,
            date=dt.date.today() - dt.timedelta(days=1),
        )
    return term


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_the_term_page_fits_and_names_wrap_between_their_parts(
    browser, live_server, crowded_term, viewport, scheme
):
    context = browser.new_context(base_url=live_server.url, viewport=viewport, color_scheme=scheme)
    page = context.new_page()
    try:
        assert page.goto("/market/kv-cache/").status == 200
        width = viewport["width"]
        page.screenshot(path=str(_shot(f"term-page-{width}-{scheme}")), full_page=True)
        assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")
        assert page.evaluate(PROBLEMS) == []
        # No scroll box is scrolled at all: every table fits the box it is in.
        wider = page.evaluate(
            """() => [...document.querySelectorAll('.table-scroll')]
                .filter((box) => box.offsetParent && box.scrollWidth > box.clientWidth + 1)
                .map((box) => box.getAttribute('aria-label') || box.textContent.slice(0, 40))"""
        )
        assert wider == []
        # Each part of a name between its separators is on one line (the <wbr>s are the only
        # places it wraps), but for a part wider than any column.
        split = page.evaluate(
            """() => {
              const broken = [];
              const cells = '.term-tables tbody th a, .term-tables td[data-label="Trader"]';
              for (const cell of document.querySelectorAll(cells)) {
                for (const node of cell.childNodes) {
                  const text = node.textContent;
                  if (node.nodeType !== Node.TEXT_NODE || /^A+$/.test(text)) continue;
                  const range = document.createRange();
                  let top = null;
                  for (let i = 0; i < text.length; i++) {
                    range.setStart(node, i);
                    range.setEnd(node, i + 1);
                    const at = Math.round(range.getBoundingClientRect().top);
                    // A new line may start only after a hyphen (or at a <wbr>, between nodes).
                    if (top !== null && at !== top && text[i - 1] !== '-') broken.push(text);
                    top = at;
                  }
                }
              }
              return broken;
            }"""
        )
        assert split == []
        # The holders' table shows every name and its shares.
        holders = page.locator(".term-tables section").first
        for name in NAMES:
            assert holders.get_by_role("link", name=name).is_visible()

        # One week of mentions: one bar, slim beside the chart, and no pale bars in the legend.
        chart = page.locator("svg.trend-chart")
        bars = chart.locator("rect.trend-chart__bar")
        assert bars.count() == 1
        assert bars.first.bounding_box()["width"] < chart.bounding_box()["width"] / 8
        legend = page.locator(".trend-figure figcaption").inner_text()
        assert (
            "Pale bars" not in legend and "The dashed line marks the week it was listed" in legend
        )
    finally:
        context.close()


def _shot(name: str) -> Path:
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS / f"{name}.png"
