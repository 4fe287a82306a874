"""``?page=`` on every paginated page, one rule (peerrevenue.pagination): a missing, empty,
zero, negative or non-numeric page is the first page; a page past the last is a 404 on the
lists, the last page on search."""

from __future__ import annotations

import datetime as dt

import pytest

from market.models import Term
from tests.factories import buy, make_listed_papers
from tests.html import Page

pytestmark = pytest.mark.django_db

NOT_A_PAGE = ["", "abc", "-1", "0", "1.5", " ", "%EF%BC%92", "1e3", "0x2"]  # %EF%BC%92: "２"
PAST_THE_END = ["999", "99999999999999999999999999"]

PAGES = {
    # path: who asks ("reader": signed in, watching cs.DC and holding shares)
    "/list/cs.DC/": None,
    "/list/cs.DC/2026-11-25/": None,
    "/author/Ada Lovelace/": None,
    "/market/": None,
    "/leaderboard/": None,
    "/": "reader",
    "/watching/": "reader",
    "/portfolio/": "reader",
    "/search/?q=paper": None,
}


@pytest.fixture
def site(cs_dc, reader):
    # 31 papers: two pages of 30, so that "the first page" is told apart from the others.
    make_listed_papers(31, category=cs_dc, date=dt.date(2026, 11, 25))
    cs_dc.toggle_watch(reader)
    buy(reader, Term.objects.create(phrase="paper"), 2)


def visible(client, url: str) -> tuple[int, str]:
    response = client.get(url)
    main = Page.of(response).first("main") if response.status_code == 200 else None
    return response.status_code, main.text if main is not None else ""


def with_page(path: str, value: str) -> str:
    return f"{path}{'&' if '?' in path else '?'}page={value}"


@pytest.mark.parametrize("path", PAGES)
def test_a_page_that_is_not_a_page_number_is_the_first_page(client, site, reader, path):
    if PAGES[path]:
        client.force_login(reader)
    status, first = visible(client, path)
    assert status == 200
    for value in NOT_A_PAGE:
        assert visible(client, with_page(path, value)) == (200, first), value
    assert visible(client, with_page(path, "1")) == (200, first)


@pytest.mark.parametrize("path", ["/list/cs.DC/", "/author/Ada Lovelace/", "/search/?q=paper"])
def test_the_second_page_is_not_the_first(client, site, path):
    assert visible(client, with_page(path, "2"))[1] != visible(client, path)[1]


@pytest.mark.parametrize("path", [p for p in PAGES if "search" not in p])
def test_a_page_past_the_last_is_not_found(client, site, reader, path):
    if PAGES[path]:
        client.force_login(reader)
    for value in PAST_THE_END:
        assert client.get(with_page(path, value)).status_code == 404, value


def test_search_past_the_last_page_shows_the_last(client, site):
    last = visible(client, "/search/?q=paper&page=2")
    for value in PAST_THE_END:
        assert visible(client, f"/search/?q=paper&page={value}") == last
