"""Whatever is typed into a search: a search or a clear message, never a server error, and
never a saved search that breaks the pages it feeds.

PostgreSQL's ``websearch_to_tsquery`` keeps each NOT of a run ("-" where a word is expected)
on a stack of 32 until the word they apply to, and fails the whole statement past that. The
fuzz tests send random mixes of its operator characters, quotes, prefixes and long runs through
the real database."""

from __future__ import annotations

import datetime as dt
import importlib

import pytest
from django.db import connection
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from accounts.saved_searches import SavedSearch, SavedSearchError, save_search
from papers import fulltext, search
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db

HYPHENS = "-" * 40
OVERFLOWING = [
    "-" * 33,
    "-" * 300,
    f"ti:{HYPHENS}",
    f"au:{HYPHENS}",
    f"abs:{HYPHENS} gossip",
    f"gossip {HYPHENS}",
    "- " * 60,
    "-!" * 60,
    "-(" * 60,
    '-"' * 60,
    f'"gossip {HYPHENS}"',
]


def found(client, q: str) -> list[str]:
    response = client.get("/search/", {"q": q})
    assert response.status_code == 200, page_text(response)
    return [
        link.text
        for link in Page.of(response).select("a", href=...)
        if "/abs/" in link.attrs["href"]
    ]


@pytest.fixture
def papers(cs_dc):
    gossip = make_paper(arxiv_id="2611.00001", title="Gossip protocols for membership")
    raft = make_paper(arxiv_id="2611.00002", title="Raft made simple")
    for paper in (gossip, raft):
        list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 24))
    return gossip, raft


@pytest.fixture
def unbounded(monkeypatch):
    """The parser as it was before runs of NOTs were bounded: what the database refuses."""
    module = importlib.import_module("papers.search.parse")  # the package names a function so
    monkeypatch.setattr(module, "bounded_negations", lambda text: text)


@pytest.mark.parametrize("q", OVERFLOWING)
def test_a_run_of_hyphens_is_a_search_or_a_message(client, papers, q):
    response = client.get("/search/", {"q": q})
    assert response.status_code in (200, 400), response.status_code
    if response.status_code == 400:
        assert "needs something right after it" in page_text(response)


def test_a_run_of_nots_means_what_it_says(client, papers):
    # An even run cancels out, an odd one excludes, however long the run.
    assert "Gossip protocols for membership" in found(client, f"{HYPHENS}gossip")
    assert found(client, f"membership -{HYPHENS}gossip") == []
    assert "Raft made simple" in found(client, f"simple {HYPHENS}-gossip")
    assert "Raft made simple" not in found(client, f"simple -{HYPHENS}raft")


def test_a_search_the_database_refuses_is_a_message(client, papers, unbounded):
    response = client.get("/search/", {"q": f"gossip {HYPHENS}"})
    assert response.status_code == 400
    assert "This search could not be run" in page_text(response)
    # The transaction is still good: the next search answers.
    assert "Gossip protocols for membership" in found(client, "gossip")


@pytest.mark.parametrize("q", ["-" * 33, f"ti:{HYPHENS}", "- " * 60])
def test_a_search_of_operators_alone_is_not_saved(reader, client, q):
    client.force_login(reader)
    response = client.post("/searches/", {"query": q}, follow=True)
    assert response.status_code == 200
    assert Page.of(response).select(cls="message--error"), page_text(response)
    assert not SavedSearch.objects.exists()


def test_a_search_the_database_refuses_is_not_saved(reader, unbounded):
    with pytest.raises(SavedSearchError, match="This search could not be run"):
        save_search(user=reader, text=f"gossip {HYPHENS}")
    assert not SavedSearch.objects.exists()


def stored_under_older_rules(reader, *texts: str) -> Client:
    for text in texts:
        SavedSearch.objects.create(user=reader, query=text)
    client = Client()
    client.force_login(reader)
    return client


def test_a_stored_run_of_hyphens_breaks_neither_page(reader, papers, cs_dc):
    cs_dc.toggle_watch(reader)
    client = stored_under_older_rules(reader, "-" * 40, f"raft {HYPHENS}")
    front = client.get("/")
    assert front.status_code == 200
    assert "Gossip protocols for membership" in page_text(front)  # the watched category
    listing = client.get("/searches/")
    assert listing.status_code == 200
    assert "This search cannot run: it has no words to match" in page_text(listing)
    assert "Raft made simple" in page_text(listing)  # the other search still runs


def test_a_stored_search_the_database_refuses_breaks_neither_page(reader, papers, cs_dc, unbounded):
    cs_dc.toggle_watch(reader)
    client = stored_under_older_rules(reader, f"raft {HYPHENS}")
    front = client.get("/")
    assert front.status_code == 200
    assert "Your saved searches could not be run" in page_text(front)
    assert "Gossip protocols for membership" in page_text(front)
    listing = client.get("/searches/")
    assert listing.status_code == 200
    assert "This search could not be run" in page_text(listing)
    assert f"raft {HYPHENS}" in page_text(listing)  # listed, to be deleted


# Fuzzing ----------------------------------------------------------------------------------

PIECES = ["-", "-", "-", '"', " ", "!", "&", "|", "(", ")", "<", ">", ":", "*", "'", "\\",
          "or", "OR", " or ", "ti:", "au:", "abs:", "cat:", "a", "gossip", "x-y", "\u00a0",
          "\t", "<->", "!!", "-\"", "\"-"]  # fmt: skip
operator_text = st.lists(
    st.one_of(
        st.sampled_from(PIECES),
        st.integers(2, 120).map(lambda n: "-" * n),
        st.tuples(st.sampled_from(["-", "- ", "-!", "-(", '-"', "- -"]), st.integers(2, 60)).map(
            lambda run: run[0] * run[1]
        ),
    ),
    max_size=60,
).map("".join)

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@FUZZ
@given(text=operator_text)
def test_every_parsed_query_is_one_postgresql_takes(db, text):
    """No reliance on the second wall: what parse() lets through, the database runs."""
    try:
        query = search.parse(text)
    except search.SearchError:
        event("refused by parse")
        return
    event("parsed")
    with connection.cursor() as cursor:
        for part, _weight in query.text_parts():
            cursor.execute(
                "SELECT websearch_to_tsquery(%s::regconfig, %s)", [fulltext.CONFIG, part]
            )


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=operator_text)
def test_every_search_page_answers(client, papers, text):
    response = client.get("/search/", {"q": text})
    event(f"status {response.status_code}")
    assert response.status_code in (200, 400)
