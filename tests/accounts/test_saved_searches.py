"""Saved searches: a reader keeps a search, and new papers that match it come to them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.core import mail
from django.urls import reverse

from accounts.digest import send_daily_digests
from accounts.models import Preferences
from accounts.saved_searches import (
    MAX_SAVED_SEARCHES,
    SavedSearch,
    SavedSearchError,
    save_search,
    saved_search_matches,
)
from papers.models import Category
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text
from tests.text import html_part

pytestmark = pytest.mark.django_db

MONDAY = dt.date(2026, 11, 2)
TUESDAY = MONDAY + dt.timedelta(days=1)


def announce(title: str, *, category, date=TUESDAY, authors=("Ada Lovelace",), **kwargs):
    paper = make_paper(title=title, authors=authors, **kwargs)
    list_paper(paper, category=category, date=date)
    return paper


def result_ids(response) -> list[str]:
    return Page.of(response).ids("li", cls="paper")


@pytest.fixture
def cs_lg(db):
    return Category.objects.get_or_create(
        code="cs.LG",
        defaults={"name": "Machine Learning", "archive_code": "cs", "archive_name": "CS"},
    )[0]


def test_a_reader_saves_a_search_from_the_results(client, reader, cs_dc):
    announce("Gossip protocols", category=cs_dc)
    client.force_login(reader)

    assert "Save this search" in page_text(client.get(reverse("papers:search"), {"q": "gossip"}))

    response = client.post(reverse("saved_searches"), {"query": "gossip"}, follow=True)
    assert "Saved “gossip”" in page_text(response)
    assert list(reader.saved_searches.values_list("query", flat=True)) == ["gossip"]

    again = client.post(reverse("saved_searches"), {"query": "gossip"}, follow=True)
    assert "already saved" in page_text(again)
    assert reader.saved_searches.count() == 1


def test_signed_out_readers_are_asked_to_log_in(client):
    response = client.get(reverse("saved_searches"))
    assert response.status_code == 302 and reverse("login") in response.url
    assert "Save this search" not in page_text(client.get(reverse("papers:search"), {"q": "x"}))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("2611.01234", "An arXiv id is one paper"),
        ("cat:cs.DC", "Save words"),
        ("the of and", "too common"),
        ("au:", "needs something right after it"),
        ("x" * 400, "at most 300"),
    ],
)
def test_searches_that_would_bring_nothing_are_refused_clearly(reader, text, message):
    with pytest.raises(SavedSearchError, match=message):
        save_search(user=reader, text=text)


def test_refusals_show_on_the_page(client, reader):
    client.force_login(reader)
    response = client.post(reverse("saved_searches"), {"query": "2611.01234"}, follow=True)
    assert response.status_code == 200
    assert "An arXiv id is one paper" in page_text(response)
    assert not SavedSearch.objects.exists()


def test_a_reader_keeps_a_bounded_number_of_searches(reader):
    for n in range(MAX_SAVED_SEARCHES):
        save_search(user=reader, text=f"topic{n}")
    with pytest.raises(SavedSearchError, match="delete one"):
        save_search(user=reader, text="one more")


def test_new_matches_are_listed_once_with_the_searches_they_match(client, reader, cs_dc, cs_lg):
    both = announce(
        "Gossip for federated learning",
        category=cs_dc,
        authors=["Leslie Lamport"],
    )
    list_paper(both, category=cs_lg, date=TUESDAY)  # listed twice, brought once
    gossip_only = announce("Gossip in sensor networks", category=cs_dc)
    old = announce("Gossip of old", category=cs_dc, date=MONDAY - dt.timedelta(days=30))
    announce("Unrelated consensus", category=cs_dc)
    hidden = announce("Hidden gossip", category=cs_dc, hidden=True)
    save_search(user=reader, text="gossip")
    save_search(user=reader, text="au:lamport")

    matches = saved_search_matches(user=reader, since=MONDAY)

    assert [m.paper.arxiv_id for m in matches] == [both.arxiv_id, gossip_only.arxiv_id]
    assert [s.query for s in matches[0].searches] == ["gossip", "au:lamport"]
    assert [s.query for s in matches[1].searches] == ["gossip"]
    assert matches[0].title_text == "*Gossip* for federated learning"
    assert "Lamport" in Page.parse(matches[0].paper.search_authors or "").texts("mark")
    ids = {m.paper.arxiv_id for m in matches}
    assert old.arxiv_id not in ids and hidden.arxiv_id not in ids

    client.force_login(reader)
    page = client.get(reverse("saved_searches"))
    assert result_ids(page) == [both.arxiv_id, gossip_only.arxiv_id]
    shown = Page.of(page)
    title = shown.one("li", id=both.arxiv_id).one(cls="paper__title")
    assert title.text == "Gossip for federated learning" and title.texts("mark") == ["Gossip"]
    assert "Matches your saved searches" in shown.text and "2 new" in shown.text


def test_a_paper_first_announced_before_the_window_is_not_new_again(reader, cs_dc, cs_lg):
    paper = announce("Gossip everywhere", category=cs_dc, date=MONDAY)
    list_paper(paper, category=cs_lg, date=TUESDAY, announce_type="cross")
    save_search(user=reader, text="gossip")

    assert [m.paper for m in saved_search_matches(user=reader, since=MONDAY, until=MONDAY)] == [
        paper
    ]
    assert saved_search_matches(user=reader, since=TUESDAY, until=TUESDAY) == []


def test_deleting_a_saved_search(client, reader, rival):
    mine = save_search(user=reader, text="gossip")[0]
    theirs = save_search(user=rival, text="gossip")[0]
    client.force_login(reader)

    url = reverse("delete_saved_search")
    assert client.post(url, {"search": theirs.pk}).status_code == 404
    assert client.post(url, {"search": "x"}).status_code == 404
    response = client.post(url, {"search": mine.pk}, follow=True)
    assert "Deleted the saved search" in page_text(response)
    assert list(SavedSearch.objects.all()) == [theirs]


def subscribe(user) -> None:
    Preferences.objects.update_or_create(user=user, defaults={"daily_digest": True})


def test_the_digest_brings_new_matches_once_per_paper_with_words_marked(reader, cs_dc, cs_lg):
    subscribe(reader)
    cs_dc.toggle_watch(reader)
    announce("Gossip in a watched category", category=cs_dc)
    elsewhere = announce("Federated gossip", category=cs_lg, primary="cs.LG", categories=["cs.LG"])
    list_paper(elsewhere, category=cs_lg, date=TUESDAY + dt.timedelta(days=1))  # again later
    save_search(user=reader, text="gossip")
    save_search(user=reader, text="federated")

    assert send_daily_digests(date=TUESDAY, base_url="https://peer.example") == 1
    [message] = mail.outbox
    body = message.body
    assert body.count("Gossip in a watched category") == 1  # in the day's list only
    assert "New papers matching your saved searches" in body
    assert body.count("Federated") == 1
    assert "- *Federated* *gossip*" in body
    assert '"gossip", "federated"' in body
    html = html_part(message)
    assert "<mark>Federated</mark> <mark>gossip</mark>" in html

    # The next day the same paper is listed again: it is not new, so no second mail about it.
    mail.outbox.clear()
    assert send_daily_digests(date=TUESDAY + dt.timedelta(days=1)) == 0


def test_saved_search_matches_cost_two_queries(reader, cs_dc, django_assert_num_queries):
    for n in range(5):
        announce(f"Gossip paper {n}", category=cs_dc)
    for text in ("gossip", "paper", "au:lovelace", '"gossip paper"'):
        save_search(user=reader, text=text)

    with django_assert_num_queries(3):  # the searches, the papers, their category names
        assert len(saved_search_matches(user=reader, since=MONDAY)) == 5


def test_saved_searches_feed_the_front_page_once_per_paper(client, reader, cs_dc, cs_lg):
    cs_dc.toggle_watch(reader)
    watched = announce("Gossip in a watched category", category=cs_dc)
    found = announce("Federated gossip", category=cs_lg, primary="cs.LG", categories=["cs.LG"])
    announce("Unrelated learning", category=cs_lg, primary="cs.LG", categories=["cs.LG"])
    save_search(user=reader, text="gossip")
    client.force_login(reader)

    ids = result_ids(client.get("/"))

    assert sorted(ids) == sorted([watched.arxiv_id, found.arxiv_id])
