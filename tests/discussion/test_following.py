"""Notifications without noise: following is opt-in; replies and comments where one follows
come as ONE notice, shown once and in the digest; an Atom feed per thread."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from discussion import writing
from discussion.targets import Target
from market import notices
from market.models.notices import Notice
from tests.discussion.speak import comments_on
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"


def test_nobody_is_told_unless_they_follow_or_are_replied_to(writer, other, reader, paper):
    target = Target("paper", paper.pk)
    writing.post(user=writer, target=target, body="Hello", key="1")
    writing.post(user=other, target=target, body="Hi", key="2")
    assert not Notice.objects.exists()


def test_many_comments_make_one_notice_shown_once(client, writer, other, reader, paper):
    url, target = paper.get_absolute_url(), Target("paper", paper.pk)
    client.force_login(reader)
    client.post("/discussion/follow/", {"target": str(target), "on": "1", "next": url})
    assert comments_on(client, url) == []
    follow = Page.of(client.get(url)).one("form", cls="discussion__follow")
    assert follow.one("button").text == "Following this discussion"
    mine = writing.post(user=reader, target=target, body="My question", key="r")
    for n in range(5):
        writing.post(user=writer, target=target, body=f"Point {n}", key=str(n))
    writing.post(user=other, target=target, body="An answer", key="a", parent_id=mine.pk)
    assert Notice.objects.filter(user=reader).count() == 1
    text = Notice.objects.get(user=reader).text
    assert "1 reply to you" in text and "6 new comments" not in text
    assert "5 new comments in discussions you follow" in text
    shown = page_text(client.get("/"))
    assert "1 reply to you" in shown
    assert "1 reply to you" not in page_text(client.get("/"))  # told once
    assert notices.undigested(user=reader)[0].text == text  # and in the digest
    writing.post(user=writer, target=target, body="Later", key="later")
    assert Notice.objects.filter(user=reader).count() == 2  # a new batch after it was seen
    assert Notice.objects.filter(user=writer).count() == 0  # never of one's own


def test_unfollowing_stops_the_notices(client, writer, reader, paper):
    target = Target("paper", paper.pk)
    writing.follow(user=reader, target=target, on=True)
    writing.follow(user=reader, target=target, on=False)
    writing.post(user=writer, target=target, body="Quiet", key="1")
    assert not Notice.objects.exists()


def test_each_thread_has_an_atom_feed(client, writer, paper, term):
    writing.post(user=writer, target=Target("paper", paper.pk), body="Is $x$ *so*?", key="1")
    gone = writing.post(user=writer, target=Target("paper", paper.pk), body="Oops", key="2")
    writing.delete(user=writer, comment_id=gone.pk)
    response = client.get(f"/discussion/paper:{paper.pk}/feed.atom")
    assert response.status_code == 200 and "atom" in response["Content-Type"]
    feed = ET.fromstring(response.content)
    entries = feed.findall(f"{ATOM}entry")
    assert len(entries) == 1
    summary = entries[0].find(f"{ATOM}summary")
    assert summary is not None and "<em>so</em>" in (summary.text or "")
    assert client.get(f"/discussion/term:{term.pk}/feed.atom").status_code == 200
    assert client.get("/discussion/paper:999999/feed.atom").status_code == 404
    assert client.get("/discussion/nonsense/feed.atom").status_code == 404
