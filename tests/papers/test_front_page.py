"""A signed-in reader's front page: the merged stream of the categories they watch, with a
"new since your last visit" divider."""

from __future__ import annotations

import datetime as dt

import pytest

from papers.models import Category, Listing
from tests.factories import list_paper, make_listed_papers, make_paper
from tests.html import page_text
from tests.papers.pages import paper_ids_in_order, queries_for

pytestmark = pytest.mark.django_db

MONDAY, TUESDAY, WEDNESDAY = dt.date(2026, 11, 23), dt.date(2026, 11, 24), dt.date(2026, 11, 25)
DIVIDER = "New since your last visit"


@pytest.fixture
def cs_ni(db):
    return Category.objects.get(code="cs.NI")


@pytest.fixture
def watcher(client, reader, cs_dc, cs_ni):
    cs_dc.toggle_watch(reader)
    cs_ni.toggle_watch(reader)
    client.force_login(reader)
    return client


def test_anonymous_readers_start_at_cs_dc(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/list/cs.DC/"


def test_front_page_merges_the_watched_categories(watcher, cs_dc, cs_ni):
    list_paper(make_paper(arxiv_id="2611.00002", title="Gossip"), category=cs_dc, date=TUESDAY)
    routing = make_paper(arxiv_id="2611.00001", title="Routing", primary="cs.NI")
    list_paper(routing, category=cs_ni, date=TUESDAY)
    unwatched = make_paper(arxiv_id="2611.00003", title="Unwatched", primary="cs.LG")
    list_paper(unwatched, category=Category.objects.get(code="cs.LG"), date=TUESDAY)
    list_paper(make_paper(arxiv_id="2611.00004", title="Older"), category=cs_dc, date=MONDAY)
    response = watcher.get("/")
    assert response.status_code == 200
    assert paper_ids_in_order(response) == ["2611.00001", "2611.00002", "2611.00004"]
    text = page_text(response)
    assert "Your papers" in text
    assert "Networking and Internet Architecture Routing" in text
    assert "Distributed Computing Gossip" in text
    assert "Tuesday 24 November" in text and "Monday 23 November" in text


def test_a_paper_in_two_watched_categories_appears_once_under_its_primary(watcher, cs_dc, cs_ni):
    paper = make_paper(arxiv_id="2611.00001", title="Both", primary="cs.NI")
    list_paper(paper, category=cs_ni, date=TUESDAY)
    list_paper(paper, category=cs_dc, date=TUESDAY, announce_type=Listing.AnnounceType.CROSS)
    response = watcher.get("/")
    assert paper_ids_in_order(response) == ["2611.00001"]
    assert "Networking and Internet Architecture Both" in page_text(response)


def test_the_divider_marks_what_is_new_since_the_last_visit(watcher, cs_dc):
    list_paper(make_paper(arxiv_id="2611.00001"), category=cs_dc, date=MONDAY)
    first = watcher.get("/")
    assert DIVIDER not in page_text(first)  # a first visit: nothing to compare with

    list_paper(make_paper(arxiv_id="2611.00002", title="Beta"), category=cs_dc, date=TUESDAY)
    list_paper(make_paper(arxiv_id="2611.00003", title="Gamma"), category=cs_dc, date=WEDNESDAY)
    text = page_text(watcher.get("/"))
    assert text.index("Gamma") < text.index("Beta") < text.index(DIVIDER)
    assert text.index(DIVIDER) < text.index("Monday 23 November")
    assert text.count(DIVIDER) == 1

    # Reloading keeps the divider where it was until another day arrives.
    text = page_text(watcher.get("/"))
    assert text.index("Beta") < text.index(DIVIDER) < text.index("Monday 23 November")

    later = dt.date(2026, 11, 26)
    list_paper(make_paper(arxiv_id="2611.00004", title="Newest"), category=cs_dc, date=later)
    text = page_text(watcher.get("/"))
    assert text.index("Newest") < text.index(DIVIDER) < text.index("Wednesday 25 November")


def test_the_divider_is_per_reader(client, cs_dc, reader, trader):
    cs_dc.toggle_watch(reader)
    cs_dc.toggle_watch(trader)
    list_paper(make_paper(arxiv_id="2611.00001"), category=cs_dc, date=MONDAY)
    client.force_login(reader)
    client.get("/")
    list_paper(make_paper(arxiv_id="2611.00002"), category=cs_dc, date=TUESDAY)
    assert DIVIDER in page_text(client.get("/"))
    client.force_login(trader)
    assert DIVIDER not in page_text(client.get("/"))


def test_a_reader_who_watches_nothing_is_told_how(client, reader):
    client.force_login(reader)
    text = page_text(client.get("/"))
    assert "You are not watching any category" in text


def test_watching_shows_the_same_stream(watcher, cs_dc):
    list_paper(make_paper(arxiv_id="2611.00001"), category=cs_dc, date=MONDAY)
    assert paper_ids_in_order(watcher.get("/watching/")) == ["2611.00001"]


def test_front_page_query_count_is_fixed(watcher, cs_dc, cs_ni):
    def count_queries() -> int:
        return queries_for(watcher, "/")

    make_listed_papers(2, category=cs_dc, date=MONDAY, first_number=1)
    count_queries()  # warm the per-process term matcher
    few = count_queries()
    make_listed_papers(25, category=cs_dc, date=TUESDAY, first_number=100)
    make_listed_papers(25, category=cs_ni, date=WEDNESDAY, first_number=200)
    count_queries()  # this visit moves the divider (one more write), the next one does not
    assert count_queries() == few


def test_reloading_the_front_page_writes_and_locks_nothing(watcher, cs_dc):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    make_listed_papers(2, category=cs_dc, date=MONDAY, first_number=1)
    watcher.get("/")  # the first visit records where the reader got to
    with CaptureQueriesContext(connection) as queries:
        assert watcher.get("/").status_code == 200
    statements = " ".join(query["sql"] for query in queries.captured_queries).upper()
    assert "FOR UPDATE" not in statements
    assert "UPDATE " not in statements.replace("FOR UPDATE", "")
    assert "INSERT " not in statements
