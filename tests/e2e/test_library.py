"""A reader's library in a real browser, at 390 and 1280 px: save from a list page, tag, export
BibTeX that a BibTeX parser reads, and see "for you" change after saving another topic."""

from __future__ import annotations

import bibtexparser
import pytest
from django.contrib.auth import get_user_model

from tests.conftest import PASSWORD
from tests.e2e.sessions import signed_in
from tests.e2e.test_layout import DESKTOP, PHONE
from tests.factories import make_topical_papers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def topical_day(cs_dc):
    from library.recommend import pool, text

    pool.forget()
    text.forget()
    get_user_model().objects.create_user("tobias", "tobias@example.org", PASSWORD)
    yield make_topical_papers(cs_dc, per_topic=5, days=1)
    pool.forget()
    text.forget()


def save_from_the_list(page, paper) -> None:
    page.goto("/list/cs.DC/")
    entry = page.locator(f"li[id='{paper.arxiv_id}']")
    entry.get_by_role("button", name="☆ Save").click()
    # Back at the paper's entry, not at the top of the list.
    page.wait_for_url(f"**/list/cs.DC/#{paper.arxiv_id}")
    assert page.locator(f"li[id='{paper.arxiv_id}']").get_by_role("button", name="★ Saved").count()


def first_pick(page) -> str:
    page.goto("/recommended/")
    return page.locator("ol.papers li.paper h3").first.inner_text()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390", "1280"])
def test_save_tag_export_and_see_for_you_follow(browser, live_server, topical_day, viewport):
    papers = topical_day
    context, page = signed_in(browser, live_server, viewport)
    try:
        for paper in papers["consensus"][:2]:
            save_from_the_list(page, paper)

        page.goto("/library/")
        entry = page.locator(f"li[id='{papers['consensus'][0].arxiv_id}']")
        entry.get_by_label("Tags").fill("consensus, to read")
        entry.get_by_role("button", name="Set tags").click()
        page.wait_for_load_state()
        assert page.get_by_role("link", name="consensus").count()

        with page.expect_download() as download:
            page.get_by_role("link", name="BibTeX").click()
        library = bibtexparser.parse_string(download.value.path().read_text(encoding="utf-8"))
        assert not library.failed_blocks
        assert {e.key for e in library.entries} == {p.arxiv_id for p in papers["consensus"][:2]}

        # Tasks run eagerly here: each save refits the reader before the next page.
        consensus = {p.title for p in papers["consensus"][2:]}
        assert first_pick(page) in consensus

        for paper in papers["consensus"][:2]:
            page.goto("/library/")
            page.locator(f"li[id='{paper.arxiv_id}']").get_by_role("button", name="★ Saved").click()
            page.wait_for_load_state()
        for paper in papers["storage"][:2]:
            save_from_the_list(page, paper)
        assert first_pick(page) in {p.title for p in papers["storage"][2:]}
        page.goto("/")
        assert (
            page.locator("section.for-you li")
            .first.inner_text()
            .startswith(tuple(p.title for p in papers["storage"][2:]))
        )
    finally:
        context.close()
