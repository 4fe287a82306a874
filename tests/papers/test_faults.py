"""arXiv misbehaving, end to end: each fault ends in a failed run that wrote nothing (or a clean
success after retries), and the next run catches up. A local server stands in for arXiv."""

from __future__ import annotations

import datetime as dt
import gzip
import logging
import time
from xml.sax.saxutils import escape

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from papers import ingest
from papers.arxiv.documents import parse_feed
from papers.arxiv.records import MAX_AUTHORS, MAX_TEXT
from papers.models import IngestRun, Listing, Paper
from tests.papers.helpers import Reply, atom_entry, atom_feed, fixture_bytes, rss_feed, rss_item

pytestmark = pytest.mark.django_db

FEED = fixture_bytes("rss_new.xml")
HTML_ERROR = b"<!DOCTYPE html><html><head><title>503 Service Unavailable</title></head></html>"


def hang(seconds: float):
    def reply(request) -> Reply:
        time.sleep(seconds)
        return Reply(200, FEED)

    return reply


FAULTS = {
    "503 every time": [Reply(503, HTML_ERROR)],
    "429 with Retry-After": [Reply(429, b"slow down", {"Retry-After": "1"})],
    "HTML error page served as 200": [Reply(200, HTML_ERROR)],
    "truncated body": [Reply(200, FEED[: len(FEED) // 2])],
    "garbage": [Reply(200, b"\x00\x01 not a feed")],
}


@pytest.mark.parametrize("fault", FAULTS, ids=list(FAULTS))
def test_a_fault_writes_nothing_and_the_next_run_catches_up(cs_dc, arxiv_server, sleeps, fault):
    arxiv_server.route("/rss/cs.DC", *FAULTS[fault])
    with pytest.raises(ingest.IngestError) as refused:
        ingest.ingest_category(category=cs_dc)
    assert str(refused.value)  # a reason a person can read
    assert not Paper.objects.exists() and not Listing.objects.exists()
    failed = IngestRun.objects.get()
    assert failed.status == IngestRun.Status.FAILED and failed.error
    # Bounded: the retries stop (ARXIV_HTTP_RETRIES is 2 in the tests).
    assert len(arxiv_server.hits("/rss/cs.DC")) <= 3

    arxiv_server.route("/rss/cs.DC", Reply(200, FEED))
    caught_up = ingest.ingest_category(category=cs_dc)
    assert caught_up.status == IngestRun.Status.SUCCEEDED
    assert Listing.objects.filter(category=cs_dc).count() == 2


def test_a_hang_past_the_timeout_is_retried_then_succeeds(cs_dc, arxiv_server, settings, sleeps):
    settings.ARXIV_HTTP_TIMEOUT_SECONDS = 0.2
    replies = [hang(0.6), lambda request: Reply(200, FEED)]
    arxiv_server.route_function("/rss/cs.DC", lambda request: replies.pop(0)(request))
    run = ingest.ingest_category(category=cs_dc)
    assert run.status == IngestRun.Status.SUCCEEDED
    assert Listing.objects.count() == 2
    assert len(sleeps) == 1


def test_an_empty_feed_then_the_real_one(cs_dc, arxiv_server, sleeps):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_empty.xml")))
    empty = ingest.ingest_category(category=cs_dc)
    assert (empty.status, empty.items) == (IngestRun.Status.SUCCEEDED, 0)
    arxiv_server.route("/rss/cs.DC", Reply(200, FEED))
    ingest.ingest_category(category=cs_dc)
    assert Listing.objects.count() == 2


def test_enrichment_through_a_flaky_api_never_fails_the_ingest(
    cs_dc, arxiv_server, settings, sleeps
):
    settings.ARXIV_ENRICH = True
    arxiv_server.route("/rss/cs.DC", Reply(200, FEED))
    arxiv_server.route("/api/query", Reply(200, fixture_bytes("api_empty_page.xml")))
    run = ingest.ingest_category(category=cs_dc)
    assert run.status == IngestRun.Status.SUCCEEDED
    assert Listing.objects.count() == 2
    assert len(arxiv_server.hits("/api/query")) == 3  # the quirk was retried, within bounds


# ------------------------------------------------------------------------------------------
# Hostile feeds: oversized fields, impossible dates, papers outside the category
# ------------------------------------------------------------------------------------------

DAY = dt.date(2026, 11, 24)


def ingest_file(category, tmp_path, content: bytes, *, date: dt.date | None = None):
    feed = tmp_path / "feed.xml"
    feed.write_bytes(content)
    return ingest.ingest_category(category=category, file=feed, date=date, enrich=False)


def test_oversized_fields_are_cut_with_a_warning_and_the_rest_of_the_feed_stored(
    cs_dc, tmp_path, caplog
):
    huge = rss_item(
        "2611.00001",
        title="Raft " * 6_000,  # 30,000 characters
        abstract="Raft consensus " * 4_000,  # 60,000 characters (59,999 once stripped)
        creator=", ".join(f"Author {n}" for n in range(2_500)),
    )
    feed = rss_feed([huge, rss_item("2611.00002", title="A normal paper")])

    with caplog.at_level(logging.WARNING):
        run = ingest_file(cs_dc, tmp_path, feed)

    assert (run.status, run.papers_created, run.listings_created) == ("succeeded", 2, 2)
    paper = Paper.objects.get(arxiv_id="2611.00001")
    assert len(paper.title) <= MAX_TEXT and len(paper.abstract) == MAX_TEXT
    assert paper.abstract.startswith("Raft consensus Raft consensus")
    assert len(paper.authors) == MAX_AUTHORS
    assert Paper.objects.get(arxiv_id="2611.00002").title == "A normal paper"
    cut = [r.getMessage() for r in caplog.records if "cut from" in r.getMessage()]
    assert any("2611.00001: abstract cut from 59999 to 20000 characters" in m for m in cut)
    assert any("2611.00001: authors cut from 2500 to 2000 authors" in m for m in cut)


def test_oversized_api_fields_and_category_codes_are_cut_too(cs_dc):
    entry = atom_entry(
        "2611.00003",
        published="2026-11-23T15:00:00Z",
        comment="Accepted " * 5_000,
        others=("x" * 5_000,),  # longer than any category column holds
        authors=tuple((f"Author {n}", "Affiliation " * 3_000) for n in range(3)),
    )
    parsed = parse_feed(atom_feed([entry], total=1), date=DAY)

    ingest.ingest_feed(category=cs_dc, parsed=parsed, source="test")

    paper = Paper.objects.get(arxiv_id="2611.00003")
    assert len(paper.comment) == MAX_TEXT
    assert paper.categories == ["cs.DC"]
    assert all(len(author["affiliation"]) <= MAX_TEXT for author in paper.authors)


BAD_CHANNEL_DATES = {
    "year 9999": "Fri, 31 Dec 9999 23:00:00 -0500",
    "year 0001": "Mon, 01 Jan 0001 00:00:00 +0500",
    "year 0000": "Tue, 24 Nov 0000 00:00:00 -0500",
    "31 February": "Tue, 31 Feb 2026 00:00:00 -0500",
    "not a date": "sometime next week",
    "before arXiv": "Mon, 02 Jan 1989 00:00:00 -0500",
}


@pytest.mark.parametrize("date", BAD_CHANNEL_DATES.values(), ids=list(BAD_CHANNEL_DATES))
def test_an_impossible_feed_date_is_refused_in_one_line_and_nothing_is_written(
    cs_dc, tmp_path, date
):
    # The item's own date is fine: the channel's must not be silently replaced by it.
    item = rss_item("2611.00001", pub_date="Tue, 24 Nov 2026 00:00:00 -0500")
    with pytest.raises(ingest.IngestError, match=r"The feed's date \(pubDate\) is") as refused:
        ingest_file(cs_dc, tmp_path, rss_feed([item], pub_date=date))

    message = str(refused.value)
    assert "\n" not in message and len(message) < 200
    assert not Paper.objects.exists() and not Listing.objects.exists()
    failed = IngestRun.objects.get()
    assert (failed.status, failed.error) == (IngestRun.Status.FAILED, message)


BAD_API_DATES = {
    "year 9999": "9999-12-31T23:59:59-05:00",
    "year 0001": "0001-01-01T00:00:00+05:00",
    "year 0000": "0000-11-24T10:00:00Z",
    "30 February": "2026-02-30T10:00:00Z",
    "far future": "2999-01-01T00:00:00Z",
}


@pytest.mark.parametrize("published", BAD_API_DATES.values(), ids=list(BAD_API_DATES))
@pytest.mark.parametrize("date", [None, DAY], ids=["dated by submission", "dated by the caller"])
def test_an_impossible_api_date_is_refused_in_one_line(cs_dc, tmp_path, published, date):
    content = atom_feed([atom_entry("2611.00001", published=published)], total=1)

    with pytest.raises(ingest.IngestError, match=r"2611\.00001's <published>") as refused:
        ingest_file(cs_dc, tmp_path, content, date=date)

    assert "\n" not in str(refused.value)
    assert not Paper.objects.exists() and not Listing.objects.exists()


def test_a_hostile_date_is_not_echoed_at_length(cs_dc, tmp_path):
    with pytest.raises(ingest.IngestError) as refused:
        ingest_file(cs_dc, tmp_path, rss_feed([rss_item("2611.00001")], pub_date="9" * 100_000))
    assert len(str(refused.value)) < 200


def test_an_api_answer_lists_a_paper_only_in_its_own_categories(cs_dc, caplog):
    # What a real API response for cs.DC can hold: a paper of cs.DC, a cross-list into it,
    # and a paper of cs.DM that has nothing to do with cs.DC.
    content = atom_feed(
        [
            atom_entry("2611.00001", published="2026-11-23T15:00:00Z"),
            atom_entry(
                "2611.00002", published="2026-11-23T15:00:00Z", primary="cs.LG", others=("cs.DC",)
            ),
            atom_entry(
                "2611.00003", published="2026-11-23T15:00:00Z", primary="cs.DM", others=("math.CO",)
            ),
        ],
        total=3,
    )

    with caplog.at_level(logging.WARNING):
        run = ingest.ingest_feed(
            category=cs_dc, parsed=parse_feed(content, date=DAY), source="test"
        )

    assert (run.papers_created, run.listings_created) == (3, 2)
    assert Paper.objects.get(arxiv_id="2611.00003").primary_category == "cs.DM"  # stored
    listed = set(Listing.objects.values_list("paper__arxiv_id", "category__code"))
    assert listed == {("2611.00001", "cs.DC"), ("2611.00002", "cs.DC")}
    assert "1 of 3 entries are not in cs.DC" in caplog.text


def test_a_feed_file_past_the_size_cap_is_refused_unread(cs_dc, settings, tmp_path):
    settings.ARXIV_MAX_FEED_BYTES = 1_000
    with pytest.raises(ingest.IngestError, match="larger than 1,000 bytes"):
        ingest_file(cs_dc, tmp_path, FEED)
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED
    assert not Paper.objects.exists()


@pytest.mark.parametrize(
    ("reply", "cap"),
    [
        (Reply(200, FEED), 1_000),  # an honest Content-Length past the cap
        # A gzip bomb: about 64 KB on the wire, under the cap; 64 MB once decompressed.
        (Reply(200, gzip.compress(b" " * (64 << 20)), {"Content-Encoding": "gzip"}), 1 << 20),
    ],
    ids=["large body", "gzip bomb"],
)
def test_a_download_past_the_size_cap_is_refused_without_retrying(
    cs_dc, arxiv_server, settings, sleeps, reply, cap
):
    settings.ARXIV_MAX_FEED_BYTES = cap
    arxiv_server.route("/rss/cs.DC", reply)

    with pytest.raises(ingest.IngestError, match=f"larger than {cap:,} bytes") as refused:
        ingest.ingest_category(category=cs_dc)

    assert not isinstance(refused.value, ingest.FetchError)  # the same feed stays too large
    assert len(arxiv_server.hits("/rss/cs.DC")) == 1 and sleeps == []
    assert not Paper.objects.exists()


# ------------------------------------------------------------------------------------------
# Fuzzing the parsers: whatever arrives, a ParsedFeed within the caps or a clear IngestError
# ------------------------------------------------------------------------------------------

# Text that XML 1.0 can carry (no control characters, no surrogates), long or short.
xml_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\ufffe\uffff"),
    max_size=300,
)
date_like = st.one_of(
    xml_text,
    st.builds(
        "{}, {:02d} {} {:04d} {:02d}:{:02d}:00 {}".format,
        st.sampled_from(["Mon", "Tue", "Sun"]),
        st.integers(0, 40),
        st.sampled_from(["Jan", "Feb", "Nov", "Dec", "Foo"]),
        st.integers(0, 9999),
        st.integers(0, 30),
        st.integers(0, 70),
        st.sampled_from(["-0500", "+1400", "GMT", "-2400", "EST"]),
    ),
)


def within_caps(parsed) -> bool:
    return all(
        len(entry.title) <= MAX_TEXT
        and len(entry.abstract) <= MAX_TEXT
        and len(entry.authors) <= MAX_AUTHORS
        for entry in parsed.entries
    )


@given(
    pub_date=date_like,
    title=xml_text,
    abstract=xml_text,
    creator=xml_text,
    category=xml_text,
)
@settings(max_examples=150, deadline=None)
def test_any_rss_item_parses_or_is_refused_clearly(pub_date, title, abstract, creator, category):
    item = rss_item(
        "2611.00001", title=title, abstract=abstract, creator=creator, categories=(category,)
    )
    try:
        parsed = parse_feed(rss_feed([item], pub_date=pub_date))
    except ingest.IngestError as refused:
        assert str(refused) and "\n" not in str(refused)
    else:
        assert within_caps(parsed)
        assert parsed.date is None or dt.date(1991, 1, 1) <= parsed.date


@given(published=date_like, summary=xml_text, date=st.one_of(st.none(), st.dates()))
@settings(max_examples=150, deadline=None)
def test_any_api_entry_parses_or_is_refused_clearly(published, summary, date):
    entry = atom_entry("2611.00001", published=escape(published), summary=escape(summary))
    try:
        parsed = parse_feed(atom_feed([entry], total=1), date=date)
    except ingest.IngestError as refused:
        assert str(refused) and "\n" not in str(refused)
    else:
        assert within_caps(parsed)


@given(st.binary(max_size=2_000))
@settings(max_examples=200, deadline=None)
def test_any_bytes_parse_or_are_refused_clearly(content):
    try:
        parse_feed(content)
    except ingest.IngestError as refused:
        assert str(refused)
