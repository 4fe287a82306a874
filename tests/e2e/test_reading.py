"""A reader on a category page, in a real browser: math renders, controls open without script."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)


def test_reader_opens_abstract_and_author_list(page, screenshot, cs_dc):
    long_abstract = (
        "We give a wait-free consensus protocol whose latency is $O(\\log n)$ rounds with "
        "$f < n/3$ Byzantine replicas, and show a lower bound of "
        "$\\Omega\\left(\\frac{n}{\\sqrt{f+1}}\\right)$ messages. "
        + "Our evaluation on 64 GPUs shows a 3.2$\\times$ speedup over the baseline. "
        * 6
    )
    list_paper(
        make_paper(
            arxiv_id="2611.00001",
            title="Wait-free consensus in $O(\\log n)$ rounds",
            abstract=long_abstract,
            authors=[
                "Ay\\c{s}e Da\\u{g}l{\\i}",
                'J\\"urgen M\\"uller',
                "Chen Wei",
                "Zs\\'ofia Sz\\\"oll\\H{o}si",
                "Ana P\\'erez",
            ],
        ),
        category=cs_dc,
        date=dt.date(2026, 11, 27),
    )

    page.goto("/list/cs.DC/")
    assert page.locator("h1").inner_text() == "Distributed Computing"
    assert page.locator("math").count() >= 3

    abstract = page.locator(".paper__abstract").first
    clamped_height = abstract.bounding_box()["height"]
    page.get_by_text("Read the full abstract").click()
    assert abstract.bounding_box()["height"] > clamped_height * 1.5

    assert not page.get_by_text("Zsófia Szöllősi, Ana Pérez").is_visible()
    page.get_by_text("All authors").click()
    assert page.get_by_text(
        "Ayşe Dağlı, Jürgen Müller, Chen Wei, Zsófia Szöllősi, Ana Pérez"
    ).is_visible()
    screenshot("category-page-math")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/list/cs.DC/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    screenshot("category-page-phone")
