"""The category's Atom feed against RFC 4287: what a feed and each entry must carry, one
<author> per author, and a summary that reads as plain text in any feed reader."""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET

import pytest

from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"
FRIDAY = dt.date(2026, 10, 2)


def feed(client) -> ET.Element:
    response = client.get("/list/cs.DC/feed/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    return ET.fromstring(response.content)


def rfc3339(text: str | None) -> dt.datetime:
    assert text is not None, "no date"
    parsed = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    assert parsed.tzinfo is not None, text
    return parsed


def child(element: ET.Element, path: str) -> ET.Element:
    found = element.find(path)
    assert found is not None, path
    return found


def assert_valid_atom(root: ET.Element) -> None:
    """RFC 4287 §4.1: the elements a feed and its entries must have, each exactly once."""
    assert root.tag == f"{ATOM}feed"
    for name in ("id", "title", "updated"):
        assert len(root.findall(f"{ATOM}{name}")) == 1, f"feed/{name}"
    rfc3339(root.findtext(f"{ATOM}updated"))
    feed_has_author = root.find(f"{ATOM}author") is not None
    for entry in root.findall(f"{ATOM}entry"):
        for name in ("id", "title", "updated"):
            assert len(entry.findall(f"{ATOM}{name}")) == 1, f"entry/{name}"
            assert entry.findtext(f"{ATOM}{name}", "").strip(), f"entry/{name} is empty"
        rfc3339(entry.findtext(f"{ATOM}updated"))
        assert len(entry.findall(f"{ATOM}published")) <= 1
        assert len(entry.findall(f"{ATOM}summary")) <= 1
        authors = entry.findall(f"{ATOM}author")
        assert authors or feed_has_author, "entry/author"
        for author in authors:
            assert author.findtext(f"{ATOM}name", "").strip(), "author/name"
        # An entry without content must link to it (§4.1.2).
        links = [link for link in entry.findall(f"{ATOM}link") if link.get("rel", "alternate")]
        assert entry.find(f"{ATOM}content") is not None or links


@pytest.fixture
def gossip(cs_dc):
    paper = make_paper(
        arxiv_id="2610.00007",
        title="Fast $O(n)$ gossip",
        abstract="We reach consensus in $O(\\log n)$ rounds with $f < n/3$ faults.",
        authors=["Ay\\c{s}e Da\\u{g}l{\\i}", "Ada Lovelace", "Chen Wei", "Ana P\\'erez", "Bo Li"],
    )
    paper.submitted_at = dt.datetime(2026, 9, 30, 14, 0, tzinfo=dt.UTC)
    paper.updated_at = dt.datetime(2026, 10, 1, 9, 30, tzinfo=dt.UTC)
    paper.save()
    list_paper(paper, category=cs_dc, date=FRIDAY)
    return paper


def test_the_feed_is_valid_atom(client, gossip, cs_dc):
    list_paper(make_paper(arxiv_id="2610.00008", authors=[]), category=cs_dc, date=FRIDAY)
    assert_valid_atom(feed(client))


def test_each_entry_has_its_own_dates(client, gossip, cs_dc):
    list_paper(make_paper(arxiv_id="2610.00008"), category=cs_dc, date=FRIDAY)
    entries = {entry.findtext(f"{ATOM}title"): entry for entry in feed(client).iter(f"{ATOM}entry")}
    gossip_entry = entries["Fast O(n) gossip"]
    assert rfc3339(gossip_entry.findtext(f"{ATOM}published")) == gossip.submitted_at
    assert rfc3339(gossip_entry.findtext(f"{ATOM}updated")) == gossip.updated_at
    # Without arXiv's dates, the announcement (20:00 New York the evening before) stands in.
    other = entries["A study of consensus"]
    announced = dt.datetime(2026, 10, 2, 0, 0, tzinfo=dt.UTC)
    assert rfc3339(other.findtext(f"{ATOM}published")) == announced
    assert rfc3339(other.findtext(f"{ATOM}updated")) == announced


def test_one_author_element_per_author(client, gossip):
    entry = child(feed(client), f"{ATOM}entry")
    names = [author.findtext(f"{ATOM}name") for author in entry.findall(f"{ATOM}author")]
    assert names == ["Ayşe Dağlı", "Ada Lovelace", "Chen Wei", "Ana Pérez", "Bo Li"]


def test_summary_is_plain_text_and_content_is_the_typeset_html(client, gossip):
    entry = child(feed(client), f"{ATOM}entry")
    summary = child(entry, f"{ATOM}summary")
    assert summary.get("type") == "text"
    assert summary.text == "We reach consensus in O(log n) rounds with f < n/3 faults."
    content = child(entry, f"{ATOM}content")
    assert content.get("type") == "html"
    assert "<math" in (content.text or "")


def test_the_feed_updated_is_the_newest_entry(client, gossip):
    root = feed(client)
    assert rfc3339(root.findtext(f"{ATOM}updated")) == gossip.updated_at
