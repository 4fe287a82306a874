"""The seed pages (sample/, three days of cs.DC as arXiv sent them) read in the seed order.

Every entry: label, title, short authors, abstract, "Read the full abstract" (only when the
abstract is longer than the clamp), "All authors" (four or more), then the arXiv id line.
"""

from __future__ import annotations

import datetime as dt

import pytest

from papers import ingest
from papers.models import Listing, Paper
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text
from tests.papers.helpers import SAMPLE
from tests.papers.pages import entry_parts, paper_ids_in_order, replaced_ids_in_order

pytestmark = pytest.mark.django_db

SEED_ORDER = ["paper__label", "paper__title", "paper__authors", "paper__abstract"]


@pytest.fixture
def seeded(cs_dc):
    for feed in sorted(SAMPLE.glob("cs.DC-*.rss")):
        ingest.ingest_category(category=cs_dc, file=feed, enrich=False)
    return cs_dc


def seed_pages(client) -> list:
    return [client.get("/list/cs.DC/"), client.get("/list/cs.DC/?page=2")]


def test_every_seed_entry_is_in_the_seed_order(client, seeded):
    entries = [entry for response in seed_pages(client) for entry in entry_parts(response)]
    assert len(entries) == Listing.objects.count() == 45
    for entry_id, parts in entries:
        paper = Paper.objects.get(arxiv_id=entry_id.removeprefix("replaced-"))
        expected = list(SEED_ORDER)
        if paper.abstract_is_long:
            expected.append("paper__more")
        if len(paper.authors) > 3:
            expected.append("paper__all-authors")
        expected.append("paper__ids")
        assert parts == expected, entry_id


def test_the_seed_text_reads_label_title_authors_abstract_expander_all_authors(client, seeded):
    text = " ".join(page_text(response) for response in seed_pages(client))
    checked = 0
    for paper in Paper.objects.all():
        if len(paper.authors) <= 3 or not paper.abstract_is_long:
            continue
        title = paper.title_text
        start = text.index(title)
        label = text.rindex("Distributed Computing", 0, start)
        authors = text.index(paper.short_authors, start)
        abstract = text.index(" ".join(paper.abstract_text.split()[:4]), authors)
        more = text.index("Read the full abstract", abstract)
        everyone = text.index("All authors " + ", ".join(paper.author_names), more)
        ids = text.index(f"arXiv:{paper.arxiv_id} pdf html", everyone)
        assert label < start < authors < abstract < more < everyone < ids
        checked += 1
    assert checked >= 10


def test_the_stream_and_the_replacements_hold_every_stored_listing(client, seeded):
    pages = seed_pages(client)
    stream = [entry for response in pages for entry in paper_ids_in_order(response)]
    replaced = [entry for response in pages for entry in replaced_ids_in_order(response)]
    assert len(stream) == 36 and len(replaced) == 9
    text = page_text(client.get("/archive/cs/"))
    assert "cs.DC Distributed Computing 36 papers · 9 replacements" in text


def test_read_the_full_abstract_only_where_there_is_more(client, seeded):
    entries = {
        entry.id: entry
        for response in seed_pages(client)
        for entry in Page.of(response).select("li", cls="paper")
    }
    for paper in Paper.objects.all():
        entry = entries.get(paper.arxiv_id)
        if entry is None:
            continue  # a replacement only: checked through its own entry id
        has_control = "Read the full abstract" in entry.text
        assert has_control == paper.abstract_is_long, paper.arxiv_id
        assert bool(entry.select(cls="paper__abstract--clamped")) == has_control


def test_a_short_abstract_has_no_control_and_is_not_cut(client, cs_dc):

    list_paper(
        make_paper(abstract="We study consensus."), category=cs_dc, date=dt.date(2026, 11, 26)
    )
    response = client.get("/list/cs.DC/")
    assert "Read the full abstract" not in page_text(response)
    assert "paper__abstract--clamped" not in response.content.decode()
