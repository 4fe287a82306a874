"""Without script, a star comes back to the paper it was pressed on: its ``next`` names the
paper's entry as a fragment, and the save follows it there."""

from __future__ import annotations

import datetime as dt
from urllib.parse import unquote

import pytest

from papers.models import Listing
from tests.factories import list_paper, make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 27)


@pytest.fixture
def day(cs_dc):
    new = make_paper(arxiv_id="2611.00001", title="Consensus, new")
    replaced = make_paper(arxiv_id="2610.00002", title="Consensus, replaced", version=2)
    list_paper(new, category=cs_dc, date=DAY)
    list_paper(replaced, category=cs_dc, date=DAY, announce_type=Listing.AnnounceType.REPLACE)
    return new, replaced


def star_next(page: Page, arxiv_id: str) -> str:
    return page.form(f"/abs/{arxiv_id}/save/")["next"]


def test_a_star_in_a_list_names_its_entry_and_the_save_goes_back_there(client, reader, day):
    new, replaced = day
    client.force_login(reader)
    page = Page.of(client.get("/list/cs.DC/"))
    assert star_next(page, new.arxiv_id) == f"/list/cs.DC/#{new.arxiv_id}"
    assert star_next(page, replaced.arxiv_id) == f"/list/cs.DC/#replaced-{replaced.arxiv_id}"
    # Each fragment is an entry of the page, holding its star.
    for arxiv_id, anchor in (
        (new.arxiv_id, new.arxiv_id),
        (replaced.arxiv_id, f"replaced-{replaced.arxiv_id}"),
    ):
        entry = page.one("li", cls="paper", id=anchor)
        assert entry.select("form", action=f"/abs/{arxiv_id}/save/")

    response = client.post(
        f"/abs/{new.arxiv_id}/save/", {**page.form(f"/abs/{new.arxiv_id}/save/")}
    )
    assert response.status_code == 303
    assert response["Location"] == f"/list/cs.DC/#{new.arxiv_id}"
    again = Page.of(client.get("/list/cs.DC/"))
    assert again.one("li", id=new.arxiv_id).one("button", cls="star__button").text == "★ Saved"


def test_a_star_keeps_the_query_of_the_page_it_is_on(client, reader, day):
    new, _ = day
    client.force_login(reader)
    page = Page.of(client.get("/search/?q=consensus&page=1"))
    assert star_next(page, new.arxiv_id) == f"/search/?q=consensus&page=1#{new.arxiv_id}"


def test_the_paper_pages_star_comes_back_to_the_page_itself(client, reader, day):
    new, _ = day
    client.force_login(reader)
    page = Page.of(client.get(f"/abs/{new.arxiv_id}/"))
    assert star_next(page, new.arxiv_id) == f"/abs/{new.arxiv_id}/"


def test_signed_out_the_stars_sign_in_link_comes_back_to_the_entry(client, day):
    new, _ = day
    page = Page.of(client.get("/list/cs.DC/?page=1"))
    link = page.one("li", id=new.arxiv_id).one("a", cls="star__button").attrs["href"]
    path, _, query = link.partition("?")
    assert path == "/accounts/login/"
    # One parameter, the whole address with its query and fragment encoded inside it.
    assert query.startswith("next=") and "&" not in query and "#" not in query
    assert unquote(query.removeprefix("next=")) == f"/list/cs.DC/?page=1#{new.arxiv_id}"
