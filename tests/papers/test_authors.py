"""Author names link to author pages, which list their papers here newest first and match
names with and without accents."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from tests.factories import list_paper, make_paper
from tests.html import Page, page_text
from tests.papers.pages import queries_for

pytestmark = pytest.mark.django_db

FRIDAY = dt.date(2026, 10, 2)
DAGLI = "Ay\\c{s}e Da\\u{g}l{\\i}"  # as arXiv sends it: Ayşe Dağlı


def submitted(day: int) -> dt.datetime:
    return dt.datetime(2026, 9, day, 12, tzinfo=dt.UTC)


def paper_by(arxiv_id: str, authors: list[str], *, day: int, hidden: bool = False):
    paper = make_paper(arxiv_id=arxiv_id, title=f"Paper {arxiv_id}", authors=authors, hidden=hidden)
    paper.submitted_at = submitted(day)
    paper.save()
    return paper


def titles(response) -> list[str]:
    return re.findall(r"Paper (\d{4}\.\d{5})", page_text(response))


def test_author_names_in_an_entry_link_to_their_pages(client, cs_dc):
    names = [DAGLI, "Ada Lovelace", "Chen Wei", "Ana P\\'erez"]
    list_paper(paper_by("2610.00001", names, day=1), category=cs_dc, date=FRIDAY)
    page = Page.of(client.get("/list/cs.DC/"))
    byline = page.first("p", cls="paper__authors").links()
    assert ("/author/Ay%C5%9Fe%20Da%C4%9Fl%C4%B1/", "Ayşe Dağlı") in byline
    assert ("/author/Ada%20Lovelace/", "Ada Lovelace") in byline
    assert "Ana Pérez" not in [text for _, text in byline]  # fourth author: in "All authors"
    assert ("/author/Ana%20P%C3%A9rez/", "Ana Pérez") in page.links()


def test_author_page_lists_their_papers_newest_first(client, cs_dc):
    paper_by("2609.00001", ["Ada Lovelace"], day=1)
    paper_by("2609.00003", ["Alan Turing", "Ada Lovelace"], day=20)
    paper_by("2609.00002", ["Ada Lovelace", "Chen Wei"], day=10)
    paper_by("2609.00004", ["Alan Turing"], day=25)
    make_paper(arxiv_id="2608.00009", title="Paper 2608.00009", authors=["Ada Lovelace"])
    response = client.get("/author/Ada Lovelace/")
    assert response.status_code == 200
    assert titles(response) == ["2609.00003", "2609.00002", "2609.00001", "2608.00009"]
    text = page_text(response)
    assert "Ada Lovelace" in text and "4 papers here, newest first." in text


@pytest.mark.parametrize(
    "asked",
    ["Ayşe Dağlı", "Ayse Dagli", "ayse dagli", "AYŞE  DAĞLI", "Ayşe Dağlı"],
)
def test_names_match_with_and_without_accents(client, cs_dc, asked):
    paper_by("2609.00001", [DAGLI], day=1)
    paper_by("2609.00002", ["Ayse Dagli", "Ada Lovelace"], day=2)
    paper_by("2609.00003", ["Ayşe Dağlıoğlu"], day=3)  # another person
    response = client.get(f"/author/{asked}/")
    assert titles(response) == ["2609.00002", "2609.00001"]
    # The heading uses a byline's own spelling.
    assert Page.of(response).one("h1").text in ("Ayse Dagli", "Ayşe Dağlı")


def test_hidden_papers_stay_off_author_pages(client, cs_dc):
    paper_by("2609.00001", ["Ada Lovelace"], day=1)
    paper_by("2609.00002", ["Ada Lovelace"], day=2, hidden=True)
    assert titles(client.get("/author/Ada Lovelace/")) == ["2609.00001"]


@pytest.mark.parametrize(
    "url",
    [
        "/author/Nobody Here/",
        "/author/%20/",
        "/author/%00x/",
        "/author/%ED%A0%80/",  # a lone surrogate
        "/author/%FF%FE/",  # not UTF-8
        "/author/" + "Ada " * 3000 + "/",
        "/author/Ada Lovelace/?page=99",
        "/author/%27%3B DROP TABLE papers_paper%3B--/",
    ],
)
def test_unknown_authors_are_404s(client, cs_dc, url):
    paper_by("2609.00001", ["Ada Lovelace"], day=1)
    response = client.get(url)
    assert response.status_code in (400, 404)


def test_author_page_query_count_is_fixed(client, cs_dc, reader):
    client.force_login(reader)  # signed in: no page cache in the way

    def count_queries() -> int:
        return queries_for(client, "/author/Ada Lovelace/")

    paper_by("2609.00001", ["Ada Lovelace"], day=1)
    count_queries()  # warm the per-process term matcher
    # Each count is of a page with papers it has not shown yet (their stars are read then).
    paper_by("2609.00100", ["Ada Lovelace"], day=1)
    few = count_queries()
    for number in range(2, 25):
        paper_by(f"2609.{number:05d}", ["Ada Lovelace", "Alan Turing"], day=number)
    # The session with its reader and the page's facts (one statement), the page of papers
    # with their count (one query: the count is a window over the rows the index found), the
    # papers whose entries are not kept yet (one query), the saves that fill its stars (one
    # for every star) and the comment counts beside them (one for every count).
    assert count_queries() == few <= 5
    # Nothing changed: every entry and star is kept; the session with the facts, and the
    # page's rows, are all that is read.
    assert count_queries() == 2


def test_a_prolific_authors_pages_count_and_continue(client, cs_dc):
    for number in range(1, 32):
        paper_by(f"2609.{number:05d}", ["Ada Lovelace"], day=number % 28 + 1)
    first = client.get("/author/Ada Lovelace/")
    assert "31 papers here, newest first." in page_text(first)
    assert "Page 1 of 2" in page_text(first)
    second = client.get("/author/Ada Lovelace/?page=2")
    assert "31 papers here, newest first." in page_text(second)
    assert len(titles(first)) == 30 and len(titles(second)) == 1
    assert set(titles(first)).isdisjoint(titles(second))
    # The oldest (submitted on the 1st: 2609.00028) ends the second page.
    assert titles(second) == ["2609.00028"]
    assert client.get("/author/Ada Lovelace/?page=3").status_code == 404


def test_an_author_page_follows_edits_of_bylines_and_hiding_at_once(client, cs_dc):
    """The author index is kept by the database (papers/sql/author_index.sql): whatever
    writes the paper."""
    from papers.models import Paper

    paper = paper_by("2609.00001", ["Ada Lovelace"], day=1)
    paper_by("2609.00002", ["Ada Lovelace"], day=2)
    assert titles(client.get("/author/Ada Lovelace/")) == ["2609.00002", "2609.00001"]
    byline = [{"name": "Alan Turing", "name_text": "Alan Turing", "affiliation": ""}]
    Paper.objects.filter(pk=paper.pk).update(authors=byline)
    assert titles(client.get("/author/Ada Lovelace/")) == ["2609.00002"]
    assert titles(client.get("/author/alan turing/")) == ["2609.00001"]
    Paper.objects.filter(pk=paper.pk).update(hidden=True)
    assert client.get("/author/Alan Turing/").status_code == 404
    Paper.objects.filter(pk=paper.pk).update(hidden=False, submitted_at=submitted(3))
    assert titles(client.get("/author/Alan Turing/")) == ["2609.00001"]
    paper_by("2609.00003", ["Alan Turing"], day=2)
    assert titles(client.get("/author/Alan Turing/")) == ["2609.00001", "2609.00003"]
    Paper.objects.filter(pk=paper.pk).delete()
    assert titles(client.get("/author/Alan Turing/")) == ["2609.00003"]
