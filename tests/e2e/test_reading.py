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

    # The fifth author is only in the full list, the details' own text: hidden until opened.
    fifth = page.get_by_role("link", name="Ana Pérez")
    assert not fifth.is_visible()
    page.get_by_text("All authors").click()
    assert fifth.is_visible()
    assert page.get_by_text(
        "Ayşe Dağlı, Jürgen Müller, Chen Wei, Zsófia Szöllősi, Ana Pérez"
    ).is_visible()
    screenshot("category-page-math")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/list/cs.DC/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    screenshot("category-page-phone")


# The seed pages in a browser -------------------------------------------------------------

WIDTHS = {"desktop": 1280, "phone": 390}


@pytest.fixture
def seeded(cs_dc):
    from papers import ingest
    from tests.papers.helpers import SAMPLE

    for feed in sorted(SAMPLE.glob("cs.DC-*.rss")):
        ingest.ingest_category(category=cs_dc, file=feed, enrich=False)
    return cs_dc


def clamp_report(page) -> list[dict]:
    """Per entry: whether it offers "Read the full abstract" and whether its abstract is cut."""
    return page.eval_on_selector_all(
        "li.paper",
        """entries => entries.map(entry => {
            const abstract = entry.querySelector('.paper__abstract');
            return {
                id: entry.id,
                control: entry.querySelector('.paper__more') !== null,
                cut: abstract.scrollHeight > abstract.clientHeight + 2,
            };
        })""",
    )


@pytest.mark.parametrize("layout", sorted(WIDTHS))
def test_read_the_full_abstract_only_where_the_abstract_is_cut(page, screenshot, seeded, layout):
    page.set_viewport_size({"width": WIDTHS[layout], "height": 900})
    page.goto("/list/cs.DC/")
    report = clamp_report(page)
    assert len(report) >= 30
    for entry in report:
        # Nothing is ever cut without the control; at the widest layout the control always
        # opens onto more text (on a phone more abstracts are long, and all stay readable).
        assert entry["cut"] == entry["control"] or (layout == "phone" and not entry["cut"]), entry
    assert any(entry["control"] for entry in report)
    assert any(not entry["control"] for entry in report)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTHS[layout], f"the page scrolls sideways ({width}px)"
    screenshot(f"reader-seed-{layout}")
    page.screenshot(path=f"/tmp/reader-seed-{layout}.png", full_page=False)


def test_a_reader_moves_between_days_and_to_an_author(page, screenshot, seeded):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto("/list/cs.DC/2026-11-28/")
    assert page.get_by_text(
        "No announcement on Saturday 28 November; showing from Thursday 26 November."
    ).is_visible()
    page.screenshot(path="/tmp/reader-day-notice-desktop.png", full_page=False)
    page.get_by_role("link", name="Older day: Wed 25 Nov →").click()
    page.wait_for_url("**/list/cs.DC/2026-11-25/")
    assert page.locator(".day__heading").first.inner_text() == "Wednesday 25 November"

    replacements = page.locator("details.replacements").first
    replacements.locator(":scope > summary").click()
    assert replacements.locator("li.paper").first.is_visible()
    replacements.scroll_into_view_if_needed()
    page.screenshot(path="/tmp/reader-replacements-desktop.png", full_page=False)

    author = page.locator(".paper__authors a").first
    name = author.inner_text()
    author.click()
    assert page.locator("h1").inner_text() == name
    assert page.locator("li.paper").count() >= 1
    screenshot("reader-author")

    page.set_viewport_size({"width": 390, "height": 844})
    page.goto("/list/cs.DC/2026-11-28/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width}px)"
    page.screenshot(path="/tmp/reader-day-notice-phone.png", full_page=False)
    page.goto("/archive/cs/")
    page.screenshot(path="/tmp/reader-archive-phone.png", full_page=False)


def test_a_signed_in_reader_sees_what_is_new_since_the_last_visit(page, live_server, cs_dc, reader):
    from django.conf import settings
    from django.test import Client

    from papers.models import Listing

    client = Client()
    client.force_login(reader)
    page.context.add_cookies(
        [
            {
                "name": settings.SESSION_COOKIE_NAME,
                "value": client.cookies[settings.SESSION_COOKIE_NAME].value,
                "url": live_server.url,
            }
        ]
    )
    cs_dc.toggle_watch(reader)
    for number, day in [(1, 24), (2, 24), (3, 25)]:
        paper = make_paper(arxiv_id=f"2611.{number:05d}", title=f"Seen before {number}")
        list_paper(paper, category=cs_dc, date=dt.date(2026, 11, day))
    page.goto("/")
    assert page.locator("h1").inner_text() == "Your papers"
    assert page.locator(".since-divider").count() == 0

    for number in (4, 5):
        paper = make_paper(
            arxiv_id=f"2611.{number:05d}",
            title=f"Fresh paper {number}",
            authors=["Ay\\c{s}e Da\\u{g}l{\\i}", "Chen Wei"],
        )
        list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 26))
    assert Listing.objects.count() == 5
    for layout, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        page.goto("/")
        divider = page.locator(".since-divider")
        assert divider.inner_text() == "New since your last visit ↑"
        titles = page.locator(".paper__title").all_inner_texts()
        assert titles[:2] == ["Fresh paper 4", "Fresh paper 5"]
        below = page.locator(".since-divider ~ section .paper__title").all_inner_texts()
        assert below == ["Seen before 3", "Seen before 1", "Seen before 2"]
        page.screenshot(path=f"/tmp/reader-front-page-{layout}.png", full_page=True)
