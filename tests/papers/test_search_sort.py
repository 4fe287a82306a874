"""Search results by relevance (the default) or newest first, chosen on the page and kept by
its pagination and by a saved search."""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse

from papers.search import pages as search_pages
from papers.search import query as search_query
from tests.factories import make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


def search(client, q: str = "", **params):
    return client.get(reverse("papers:search"), {"q": q, **params})


def result_ids(response) -> list[str]:
    return Page.of(response).ids("li", cls="paper")


def submitted(paper, day: int) -> None:
    paper.submitted_at = dt.datetime(2026, 11, day, 12, tzinfo=dt.UTC)
    paper.save()


@pytest.fixture
def gossip():
    """An old paper with gossip in its title (the best match) and two newer ones that only
    mention it, the newest submitted last; and one whose date is not known here."""
    best = make_paper(arxiv_id="2611.00001", title="Gossip protocols", abstract="Gossip.")
    submitted(best, 1)
    newer = make_paper(arxiv_id="2611.00002", title="Epidemics", abstract="Some gossip.")
    submitted(newer, 10)
    newest = make_paper(arxiv_id="2611.00003", title="Rumours", abstract="Gossip spreads.")
    submitted(newest, 20)
    undated = make_paper(arxiv_id="2611.00004", title="Undated", abstract="Gossip again.")
    return best, newer, newest, undated


def test_relevance_by_default_and_newest_first_on_request(client, gossip):
    best, newer, newest, undated = gossip
    by_relevance = search(client, "gossip")
    assert result_ids(by_relevance)[0] == best.arxiv_id
    by_date = search(client, "gossip", sort="date")
    assert result_ids(by_date) == [
        newest.arxiv_id,
        newer.arxiv_id,
        best.arxiv_id,
        undated.arxiv_id,  # no date known: after the dated ones
    ]


def test_the_page_shows_the_order_and_links_to_the_other(client, gossip):
    page = Page.of(search(client, "gossip"))
    assert page.one("select", name="sort").one("option", selected=...).text == "Relevance"
    assert "Sorted by relevance · newest first" in page.text
    assert page.one("p", cls="search-sort").one("strong").get("aria-current") == "true"
    (href,) = [href for href, text in page.links() if text == "newest first"]
    assert href == "?q=gossip&sort=date"
    by_date = Page.of(client.get(reverse("papers:search") + href))
    assert by_date.one("select", name="sort").one("option", selected=...).text == "Newest first"
    (back,) = [href for href, text in by_date.links() if text == "relevance"]
    assert back == "?q=gossip&sort=relevance"


def test_pagination_keeps_the_order(client):
    for number in range(1, 28):
        paper = make_paper(arxiv_id=f"2611.{number:05d}", title=f"Consensus paper {number}")
        submitted(paper, number)
    first = search(client, "consensus", sort="date")
    assert result_ids(first)[0] == "2611.00027"
    nexts = [href for href, text in Page.of(first).links() if text == "Next →"]
    assert nexts == ["?q=consensus&sort=date&page=2"]
    second = client.get(reverse("papers:search") + nexts[0])
    assert result_ids(second) == ["2611.00002", "2611.00001"]
    # A new order starts again at the first page.
    switch = [href for href, text in Page.of(second).links() if text == "relevance"]
    assert switch == ["?q=consensus&sort=relevance"]


def test_past_the_counted_limit_newest_first_shows_the_newest(client, monkeypatch):
    monkeypatch.setattr(search_pages, "MAX_COUNTED", 2)
    monkeypatch.setattr(search_query, "RECENT_PAPERS", 3)
    for number in range(1, 6):
        paper = make_paper(arxiv_id=f"2611.{number:05d}", title=f"Gossip {number}")
        submitted(paper, number)
    response = search(client, "gossip", sort="date")
    # The newest by date, among the newest three papers (RECENT_PAPERS); the pages end at the
    # counted limit, two.
    assert result_ids(response) == ["2611.00005", "2611.00004"]
    assert "More than 2 papers match; the newest come first" in page_text(response)


def test_an_unknown_order_is_a_clear_message(client, gossip):
    response = search(client, "gossip", sort="sideways")
    assert response.status_code == 400
    assert "Sort by relevance or by date (newest first)." in page_text(response)
    assert not result_ids(response)


def test_a_search_saved_newest_first_links_back_so(client, reader, gossip):
    client.force_login(reader)
    results = Page.of(search(client, "gossip", sort="date"))
    form = results.one("form", action=reverse("saved_searches")).hidden_inputs()
    assert form["query"] == "gossip" and form["sort"] == "date"
    saved = Page.of(client.post(reverse("saved_searches"), form, follow=True))
    link = [href for href, text in saved.links() if text == "gossip"]
    assert link == [reverse("papers:search") + "?q=gossip&sort=date"]
    assert "gossip (newest first)" in saved.text
    # Saved again by relevance: the one saved search, in the new order.
    again = Page.of(client.post(reverse("saved_searches"), {"query": "gossip"}, follow=True))
    assert "already saved “gossip”; it is sorted by relevance" in again.text
    assert [href for href, text in again.links() if text == "gossip"] == [
        reverse("papers:search") + "?q=gossip"
    ]
    assert reader.saved_searches.count() == 1


def test_a_saved_search_in_an_unknown_order_is_refused(client, reader, gossip):
    client.force_login(reader)
    response = client.post(
        reverse("saved_searches"), {"query": "gossip", "sort": "sideways"}, follow=True
    )
    assert "Sort a saved search by relevance or by date." in page_text(response)
    assert not reader.saved_searches.exists()
