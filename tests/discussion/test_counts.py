"""'3 comments' wherever readers choose what to read, right after every change: the category
list, search results, an author's page, Hot, the market table, and the thread's own heading."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from discussion import moderation, writing
from discussion.models import Comment
from discussion.targets import Target
from library import hot, saves
from tests.factories import list_paper
from tests.html import Page

pytestmark = pytest.mark.django_db


def count_on(client, url: str, href: str) -> str:
    """The count linking to ``href``'s discussion on the page at ``url`` ("" when none)."""
    found = [
        link.text
        for link in Page.of(client.get(url)).select("a", cls="comments-count")
        if link.get("href") == f"{href}#discussion"
    ]
    assert len(found) <= 1
    return found[0] if found else ""


@pytest.fixture
def listed_paper(paper, cs_dc, other):
    list_paper(paper, category=cs_dc, date=timezone.localdate() - dt.timedelta(days=1))
    saves.save(user=other, paper=paper)
    hot.refresh()
    return paper


def test_every_list_shows_a_papers_count_after_each_change(client, writer, other, listed_paper):
    paper = listed_paper
    href = paper.get_absolute_url()
    pages = [
        "/list/cs.DC/",
        "/search/?q=consensus",
        "/author/Ada Lovelace/",
        "/hot/?period=week",
    ]
    assert [count_on(client, url, href) for url in pages] == [""] * 4
    target = Target("paper", paper.pk)
    first = writing.post(user=writer, target=target, body="One", key="1")
    writing.post(user=other, target=target, body="Two", key="2", parent_id=first.pk)
    third = writing.post(user=other, target=target, body="Three", key="3")
    assert [count_on(client, url, href) for url in pages] == ["3 comments"] * 4
    client.force_login(other)  # signed in, the same
    assert [count_on(client, url, href) for url in pages] == ["3 comments"] * 4
    writing.delete(user=other, comment_id=third.pk)
    assert [count_on(client, url, href) for url in pages] == ["2 comments"] * 4
    moderation.hide(comment_id=first.pk, reason="spam")
    assert [count_on(client, url, href) for url in pages] == ["1 comment"] * 4
    client.logout()
    assert [count_on(client, url, href) for url in pages] == ["1 comment"] * 4
    moderation.restore(comment_id=first.pk)
    assert [count_on(client, url, href) for url in pages] == ["2 comments"] * 4
    heading = Page.of(client.get(href)).one("h2", id="discussion-heading").text
    assert "2 comments" in heading


def test_the_market_table_shows_a_terms_count(client, writer, term):
    href = term.get_absolute_url()
    assert count_on(client, "/market/", href) == ""
    writing.post(user=writer, target=Target("term", term.pk), body="Rising", key="1")
    assert count_on(client, "/market/", href) == "1 comment"
    Comment.objects.update(hidden_at=timezone.now())  # any write, even a bare update()
    assert count_on(client, "/market/", href) == ""
