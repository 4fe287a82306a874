"""The ingest writes a feed in bulk: its cost in queries does not grow with the feed's size.

A feed is parsed once (feedparser; no ElementTree pass first), planned in memory and written with
a fixed number of statements, with the behaviour of the one-row-at-a-time write: idempotent
re-runs, replacements that keep the old text, a lost race on a cross-listed paper survived.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import feedparser
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from papers import ingest
from papers.arxiv.documents import parse_feed
from papers.ingest import ingest_category, ingest_feed
from papers.models import Category, IngestRun, Listing, Paper, PaperVersion

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 24)  # a Tuesday
NEXT_DAY = dt.date(2026, 11, 25)

# Fresh feed into an empty database: run row, papers lock, savepoint, papers, release, versions,
# listings, run update, plus the savepoints of the test's own transaction. A re-run adds the
# versions and listings look-ups and, when papers changed, one update.
WRITE_BUDGET = 12
AUTHORS = r"J\"urgen M\"uller (ETH Z\"urich, Switzerland), Ana P\'erez"


def rss(
    count: int, *, date: dt.date = DAY, version: int = 1, kind: str = "new", first: int = 1
) -> bytes:
    """An rss.arxiv.org feed of `count` maths-laden items, numbered from `first`."""
    pub = f"{date:%a, %d %b %Y} 00:00:00 -0500"
    items = []
    for n in range(first, first + count):
        number = f"2611.{n:05d}"
        abstract = (
            f"We shard a KV cache over $n = {n}$ GPUs in $O(n \\log n)$ time"
            f"{' and prove a lower bound' if version > 1 else ''}; tail latency drops 4\\%."
        )
        description = f"arXiv:{number}v{version} Announce Type: {kind} \nAbstract: {abstract}"
        items.append(
            f"""<item>
<title>{escape(f"Sharded caches, version {version}, part {n}")}</title>
<link>https://arxiv.org/abs/{number}</link>
<description>{escape(description)}</description>
<guid isPermaLink="false">oai:arXiv.org:{number}v{version}</guid>
<category>cs.DC</category><category>cs.LG</category>
<pubDate>{pub}</pubDate>
<arxiv:announce_type>{kind}</arxiv:announce_type>
<dc:rights>http://creativecommons.org/licenses/by/4.0/</dc:rights>
<dc:creator>{escape(AUTHORS)}</dc:creator>
</item>"""
        )
    return f"""<?xml version='1.0' encoding='UTF-8'?>
<rss xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:dc="http://purl.org/dc/elements/1.1/"
 version="2.0"><channel>
<title>cs.DC updates on arXiv.org</title>
<link>http://rss.arxiv.org/rss/cs.DC</link>
<description>cs.DC updates on the arXiv.org e-print archive.</description>
<pubDate>{pub}</pubDate>
{"".join(items)}
</channel></rss>""".encode()


def store(category, content: bytes) -> tuple[IngestRun, int]:
    """Ingest `content`; returns the run and the number of queries it cost."""
    parsed = parse_feed(content)
    with CaptureQueriesContext(connection) as queries:
        run = ingest_feed(category=category, parsed=parsed, source="test")
    assert run.status == IngestRun.Status.SUCCEEDED
    return run, len(queries)


def state() -> dict[str, object]:
    return {
        "papers": list(Paper.objects.order_by("pk").values()),
        "versions": list(PaperVersion.objects.order_by("pk").values()),
        "listings": list(Listing.objects.order_by("pk").values()),
    }


def test_a_new_feed_costs_the_same_queries_for_5_items_as_for_60(cs_dc):
    small, small_queries = store(cs_dc, rss(5))
    large, large_queries = store(cs_dc, rss(60, first=1000))

    assert (small.papers_created, small.listings_created) == (5, 5)
    assert (large.papers_created, large.listings_created) == (60, 60)
    assert small_queries == large_queries <= WRITE_BUDGET
    assert PaperVersion.objects.count() == 65
    paper = Paper.objects.get(arxiv_id="2611.01030")
    assert "<math" in paper.abstract_html and "4%" in paper.abstract_html
    assert paper.authors_text == "Jürgen Müller, Ana Pérez"
    assert paper.authors[0]["affiliation"] == 'ETH Z\\"urich, Switzerland'


def test_a_rerun_costs_a_fixed_number_of_queries_and_writes_nothing(cs_dc):
    store(cs_dc, rss(5))
    store(cs_dc, rss(60, first=1000))
    before = state()

    again_small, small_queries = store(cs_dc, rss(5))
    again_large, large_queries = store(cs_dc, rss(60, first=1000))

    assert state() == before  # no row written, no modified_at moved
    for run in (again_small, again_large):
        assert (run.papers_created, run.papers_updated, run.listings_created) == (0, 0, 0)
    assert small_queries == large_queries <= WRITE_BUDGET


def test_replacements_in_bulk_update_only_the_replaced_papers_and_keep_old_text(cs_dc):
    store(cs_dc, rss(30))
    untouched = Paper.objects.get(arxiv_id="2611.00030")
    old = Paper.objects.get(arxiv_id="2611.00001")

    # The next day replaces papers 1–20 (v2), with a fixed query budget whatever their number.
    few, few_queries = store(cs_dc, rss(2, date=NEXT_DAY, version=2, kind="replace"))
    many, many_queries = store(cs_dc, rss(18, date=NEXT_DAY, version=2, kind="replace", first=3))

    assert (few.papers_created, few.papers_updated, few.listings_created) == (0, 2, 2)
    assert (many.papers_created, many.papers_updated, many.listings_created) == (0, 18, 18)
    assert few_queries == many_queries <= WRITE_BUDGET
    paper = Paper.objects.get(arxiv_id="2611.00001")
    assert paper.version == 2 and "lower bound" in paper.abstract
    assert "lower bound" in paper.abstract_html
    assert paper.created_at == old.created_at and paper.modified_at > old.modified_at
    assert list(paper.versions.values_list("number", "title", "abstract")) == [
        (1, old.title, old.abstract),
        (2, paper.title, paper.abstract),
    ]
    assert list(paper.listings.order_by("date").values_list("announce_type", "version")) == [
        ("new", 1),
        ("replace", 2),
    ]
    assert Paper.objects.get(arxiv_id="2611.00030").modified_at == untouched.modified_at


def test_a_paper_created_meanwhile_by_another_feed_is_updated_not_duplicated(cs_dc, monkeypatch):
    """Another category's ingest creates a cross-listed paper between our plan and our insert:
    the insert fails in its savepoint, and the feed is planned again with the paper stored."""
    real_plan = ingest.plan_feed
    plans = 0

    def plan_then_lose_the_race(**kwargs):
        nonlocal plans
        plans += 1
        plan = real_plan(**kwargs)
        if plans == 1:
            Paper.objects.create(arxiv_id="2611.00002", title="From cs.LG", version=1)
        return plan

    monkeypatch.setattr(ingest, "plan_feed", plan_then_lose_the_race)
    run, _queries = store(cs_dc, rss(3))

    assert plans == 2
    assert (run.papers_created, run.papers_updated, run.listings_created) == (2, 1, 3)
    assert Paper.objects.count() == 3
    raced = Paper.objects.get(arxiv_id="2611.00002")
    assert raced.title.startswith("Sharded caches") and "<math" in raced.abstract_html
    assert raced.listings.get().category == cs_dc


def test_an_integrity_error_that_is_not_a_race_still_fails_the_feed(cs_dc, monkeypatch):
    def broken_insert(papers):
        from django.db import IntegrityError

        raise IntegrityError("some other constraint")

    monkeypatch.setattr(ingest, "_insert_papers", broken_insert)
    with pytest.raises(ingest.IngestError, match="some other constraint"):
        ingest_feed(category=cs_dc, parsed=parse_feed(rss(2)), source="test")
    assert not Paper.objects.exists() and not Listing.objects.exists()
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


def test_the_feed_is_parsed_once(cs_dc, monkeypatch, tmp_path):
    feed = tmp_path / "cs.DC.rss"
    feed.write_bytes(rss(4))
    parses: list[str] = []
    real_feedparser, real_fromstring = feedparser.parse, ET.fromstring

    def counting_feedparser(*args, **kwargs):
        parses.append("feedparser")
        return real_feedparser(*args, **kwargs)

    def counting_fromstring(*args, **kwargs):
        parses.append("ElementTree")
        return real_fromstring(*args, **kwargs)

    monkeypatch.setattr(feedparser, "parse", counting_feedparser)
    monkeypatch.setattr(ET, "fromstring", counting_fromstring)

    run = ingest_category(category=cs_dc, file=feed, enrich=False)

    assert run.papers_created == 4
    assert parses == ["feedparser"]


def test_a_feed_that_writes_moves_its_categorys_stamp_and_a_rerun_does_not(cs_dc):
    def stamp() -> int:
        return Category.objects.values_list("stamp", flat=True).get(pk=cs_dc.pk)

    before = stamp()
    store(cs_dc, rss(10))
    written = stamp()
    assert written != before  # kept pages of cs.DC are keyed by it: they are rendered again
    store(cs_dc, rss(10))  # a re-run writes nothing, so nothing kept goes cold
    assert stamp() == written


def test_copy_stores_exactly_what_bulk_create_stores(cs_dc, monkeypatch):
    """New papers go in through COPY: the same rows as the ORM's bulk_create would store."""
    volatile = {"id", "created_at", "modified_at", "stamp"}

    def papers() -> list[dict[str, object]]:
        rows = Paper.objects.order_by("arxiv_id").values()
        return [{k: v for k, v in row.items() if k not in volatile} for row in rows]

    content = rss(12)
    with monkeypatch.context() as patched:
        patched.setattr(ingest, "_insert_papers", Paper.objects.bulk_create)
        store(cs_dc, content)
    through_orm = papers()
    Paper.objects.all().delete()

    run, queries = store(cs_dc, content)

    assert papers() == through_orm
    assert run.papers_created == 12 and queries <= WRITE_BUDGET
    assert Listing.objects.filter(paper__arxiv_id="2611.00012").exists()
    copied = Paper.objects.get(arxiv_id="2611.00003")
    assert copied.created_at is not None and copied.modified_at is not None
    assert copied.authors[1] == {
        "name": "Ana P\\'erez",
        "name_text": "Ana Pérez",
        "affiliation": "",
        "affiliation_text": "",
    }
