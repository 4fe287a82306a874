"""Parsing arXiv RSS feeds and API responses: pure functions, no database."""

from __future__ import annotations

import datetime as dt

import pytest

from papers.arxiv.api import parse_api
from papers.arxiv.documents import parse_feed
from papers.arxiv.errors import FetchError, IngestError
from papers.arxiv.records import ParsedAuthor
from papers.arxiv.rss import parse_rss, read_byline, split_authors
from papers.arxiv.sniffing import detect_format
from tests.papers.helpers import atom_entry, atom_feed, fixture_bytes

NOV_24 = dt.date(2026, 11, 24)
NOV_25 = dt.date(2026, 11, 25)


def test_rss_new_items():
    feed = parse_rss(fixture_bytes("rss_new.xml"))

    assert feed.format == "rss"
    assert feed.date == NOV_24
    assert feed.category == "cs.DC"
    assert [(e.arxiv_id, e.version, e.announce_type) for e in feed.entries] == [
        ("2611.18201", 1, "new"),
        ("2611.18215", 1, "new"),
    ]
    first, second = feed.entries
    assert first.title == (
        "Straggler-Aware Gradient Coding for Federated Learning over Lossy Links"
    )
    assert first.abstract.startswith("Stragglers dominate the wall-clock time")
    assert "Announce Type" not in first.abstract and "arXiv:" not in first.abstract
    assert r"$O(n \log n)$" in first.abstract and r"41\%" in first.abstract
    assert first.categories == ["cs.DC", "cs.LG"]
    assert first.primary_category == "cs.DC"
    assert first.license == "http://creativecommons.org/licenses/by/4.0/"
    assert [a.name for a in first.authors] == ["Priya Raman", "Tomasz Nowak", "Lena Hoffmann"]
    assert second.doi == "10.1145/3711111.3722222"
    assert second.journal_ref == "Proc. EuroSys 2027, pp. 101--115"
    assert second.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"
    # "A and B": two authors, not one.
    assert [a.name for a in second.authors] == ["Jonas Lindqvist", "Mei Tanaka"]


def test_rss_cross_list_primary_is_first_category_and_tex_survives():
    (entry,) = parse_rss(fixture_bytes("rss_cross.xml")).entries

    assert entry.announce_type == "cross"
    assert entry.primary_category == "cs.LG"
    assert entry.categories == ["cs.LG", "cs.DC", "cs.PF"]
    assert entry.license.endswith("/by-nc-sa/4.0/")
    # `&lt;` and `&amp;` are XML escapes of TeX text: decoded once, and never mistaken for HTML
    # (an HTML sanitiser would have eaten `<8 GPUs & the p99…`).
    assert r"for $n<8$ GPUs & the p99 latency stays within 5\%." in entry.abstract
    assert r"2.4$\times$ at $10^{6}$ tokens" in entry.abstract


def test_rss_replace_and_replace_cross():
    replace = parse_rss(fixture_bytes("rss_replace.xml"))
    (entry,) = replace.entries
    assert replace.date == NOV_25
    assert (entry.arxiv_id, entry.version, entry.announce_type) == ("2611.18201", 2, "replace")
    assert entry.title.startswith("Straggler-Resilient")

    (cross,) = parse_rss(fixture_bytes("rss_replace_cross.xml")).entries
    assert (cross.arxiv_id, cross.version, cross.announce_type) == (
        "2609.04417",
        3,
        "replace-cross",
    )
    assert cross.primary_category == "cs.NI"
    assert cross.doi == "10.1109/TNET.2027.0001234"
    # Abstract line structure is kept: an indented line starts a paragraph for the typesetter.
    assert "\n  In this version we add experiments" in cross.abstract
    assert r"$f < n/3$" in cross.abstract


def test_rss_empty_weekend_feed():
    feed = parse_feed(fixture_bytes("rss_empty.xml"))
    assert feed.format == "rss"
    assert feed.entries == []
    assert feed.date == dt.date(2026, 11, 28)


def test_rss_authors_with_affiliations_and_tex_accents():
    (entry,) = parse_rss(fixture_bytes("rss_authors.xml")).entries

    assert entry.authors == [
        ParsedAuthor("Ana P\\'erez", "Univ. of X, Madrid, Spain"),
        ParsedAuthor("Bo Li", ""),
        ParsedAuthor("Dağl{\\i} Ahmet", 'ETH Z\\"urich'),
        ParsedAuthor('J\\"urgen M\\"uller', 'Dept. of Physics and Astronomy, TU M\\"unchen'),
        ParsedAuthor("Zs\\'ofia Sz\\\"oll\\H{o}si", "R\\'enyi Institute (HUN-REN), Budapest"),
        ParsedAuthor("Ngozi Okafor", ""),
        ParsedAuthor("Kenji Sato", "NII (Tokyo)"),
        ParsedAuthor("Oluwaseun Adeyemi", "Univ. of Lagos"),
    ]
    # A wrapped title becomes one line.
    assert entry.title == "Erasure Coding Meets Serverless: Durable State for Ephemeral Functions"


@pytest.mark.parametrize(
    ("creator", "expected"),
    [
        ("Ada Byron", [("Ada Byron", "")]),
        ("Ada Byron and Bo Li", [("Ada Byron", ""), ("Bo Li", "")]),
        ("A One, B Two and C Three", [("A One", ""), ("B Two", ""), ("C Three", "")]),
        ("A One, B Two, and C Three", [("A One", ""), ("B Two", ""), ("C Three", "")]),
        (
            "A One (Dept. of Physics and Astronomy, Uni X), B Two",
            [("A One", "Dept. of Physics and Astronomy, Uni X"), ("B Two", "")],
        ),
        ("A One (X) (Y, Z)", [("A One", "X; Y, Z")]),
        # A pair joined by "and" inside the list is two authors, wherever it stands.
        (
            "A One, B Two and C Three (Uni X, Leeds), D Four, E Five and F Six (Lab Y), G Seven",
            [
                ("A One", ""),
                ("B Two", ""),
                ("C Three", "Uni X, Leeds"),
                ("D Four", ""),
                ("E Five", ""),
                ("F Six", "Lab Y"),
                ("G Seven", ""),
            ],
        ),
        ('Dağl{\\i} Ahmet, M\\"{u}ller Jo', [("Dağl{\\i} Ahmet", ""), ('M\\"{u}ller Jo', "")]),
        ("Anders  Sand\n   (KTH,\n Stockholm)", [("Anders Sand", "KTH, Stockholm")]),
        ("A One (unclosed, X", [("A One", "unclosed, X")]),
        ("", []),
        # A numbered legend closing the list belongs to every author by number, to none whole.
        (
            "A One (1), B Two (1,2) and C Three (3) ((1) Uni X, Leeds, (2) Lab Y,\n (3) Z Inst)",
            [
                ("A One", "Uni X, Leeds"),
                ("B Two", "Uni X, Leeds; Lab Y"),
                ("C Three", "Z Inst"),
            ],
        ),
        ("A One (a), B Two (b) ((a) Uni X; (b) Lab Y)", [("A One", "Uni X"), ("B Two", "Lab Y")]),
        ("A One (1 and 2) ((1) Uni X (2)Lab Y)", [("A One", "Uni X; Lab Y")]),
        (
            "A One (1,2), B Two (2) (1 Dip. X, Bologna; 2 Via Y 2 - 4, Trieste)",
            [("A One", "Dip. X, Bologna; Via Y 2 - 4, Trieste"), ("B Two", "Via Y 2 - 4, Trieste")],
        ),
        ("A One (1 Main St, 2 Floor)", [("A One", "1 Main St, 2 Floor")]),
        ("A One (1), B Two (2), ((1) Uni X, (2) Lab Y)", [("A One", "Uni X"), ("B Two", "Lab Y")]),
        # Without a legend, a number is whatever the authors wrote.
        ("A One (2) and B Two (Lab (2), Y)", [("A One", "2"), ("B Two", "Lab (2), Y")]),
        # "et al" ends a byline cut short; it is nobody's name.
        ("The X Collaboration, B. One, et al", [("The X Collaboration", ""), ("B. One", "")]),
        ("B. One, et al.", [("B. One", "")]),
        ("B. One and ET. AL.", [("B. One", "")]),
        ("B. One (Uni X) et al", [("B. One", "Uni X")]),
        ("Petal Alvarez, Jet Al", [("Petal Alvarez", ""), ("Jet Al", "")]),
    ],
)
def test_split_authors(creator, expected):
    assert [(a.name, a.affiliation) for a in split_authors(creator)] == expected


@pytest.mark.parametrize(
    ("creator", "cut_short"),
    [
        ("The X Collaboration, B. One, et al", True),
        ("B. One et al.", True),
        ("B. One and C. Two", False),
        ("et al", False),  # nobody left to be the start of a list
    ],
)
def test_a_byline_ending_in_et_al_says_it_lists_no_more(creator, cut_short):
    assert read_byline(creator)[1] is cut_short


def test_the_api_splits_the_byline_alike_and_et_al_is_no_author():
    content = fixture_bytes("api_response.xml").replace(
        b"<name>Lena Hoffmann</name>", b"<name>et al</name>", 1
    )
    first = parse_api(content).entries[0]
    assert [author.name for author in first.authors] == ["Priya Raman", "Tomasz Nowak"]
    assert first.more_authors
    assert not parse_api(fixture_bytes("api_response.xml")).entries[0].more_authors


def test_channel_date_is_the_new_york_date():
    # 03:00 UTC on the 24th is still the 23rd in New York.
    content = fixture_bytes("rss_empty.xml").replace(
        b"Sat, 28 Nov 2026 00:00:00 -0500", b"Tue, 24 Nov 2026 03:00:00 +0000"
    )
    assert parse_rss(content).date == dt.date(2026, 11, 23)


def test_explicit_date_must_match_an_rss_feed():
    assert parse_feed(fixture_bytes("rss_new.xml"), date=NOV_24).date == NOV_24
    with pytest.raises(IngestError, match="dated 2026-11-24, not 2026-11-25"):
        parse_feed(fixture_bytes("rss_new.xml"), date=NOV_25)


def test_unknown_announce_type_is_rejected():
    content = fixture_bytes("rss_cross.xml").replace(b">cross<", b">bogus<")
    with pytest.raises(IngestError, match="unknown announce type 'bogus'"):
        parse_rss(content)


def test_item_without_identifier_is_rejected():
    content = (
        fixture_bytes("rss_cross.xml")
        .replace(b"oai:arXiv.org:2611.17988v1", b"something-else")
        .replace(b"arXiv:2611.17988v1 Announce", b"Announce")
    )
    with pytest.raises(IngestError, match="Item 1 has no arXiv identifier"):
        parse_rss(content)


def test_api_response():
    feed = parse_api(fixture_bytes("api_response.xml"))

    assert feed.format == "api"
    assert feed.total_results == 3
    first, second, third = feed.entries
    assert (first.arxiv_id, first.version) == ("2611.18201", 1)
    # Wrapped title unwrapped; abstract keeps its lines but loses the leading indentation.
    assert first.title == "Straggler-Aware Gradient Coding for Federated Learning over Lossy Links"
    assert first.abstract.startswith("Stragglers dominate")
    assert first.comment == "14 pages, 9 figures"
    assert first.submitted_at == dt.datetime(2026, 11, 23, 16, 2, 11, tzinfo=dt.UTC)
    assert first.authors == [
        ParsedAuthor("Priya Raman", "IIT Madras"),
        ParsedAuthor("Tomasz Nowak", "University of Warsaw; IDEAS NCBR"),
        ParsedAuthor("Lena Hoffmann", ""),
    ]
    assert second.doi == "10.1145/3711111.3722222"
    assert second.journal_ref == "Proc. EuroSys 2027, pp. 101--115"
    # The API names the primary category explicitly.
    assert third.categories == ["cs.LG", "cs.DC", "cs.PF"]
    assert r"$n<8$ GPUs & the p99" in third.abstract
    # No explicit date: each entry is dated by arXiv's schedule from its first submission
    # (Mon 11:02 and 13:45 New York, and a Sunday submission: all listed Tuesday the 24th).
    assert [e.announced_on for e in feed.entries] == [NOV_24] * 3
    assert [e.listing_version for e in feed.entries] == [1, 1, 1]
    assert feed.date == NOV_24


def test_api_response_with_explicit_date():
    feed = parse_feed(fixture_bytes("api_response.xml"), date=NOV_25)
    assert feed.format == "api"
    assert feed.date == NOV_25
    assert {e.announced_on for e in feed.entries} == {NOV_25}
    assert {e.listing_version for e in feed.entries} == {None}


def test_api_doi_from_related_link_and_old_style_ids():
    entry = atom_entry("cs/0112017", published="2001-12-14T10:00:00Z", version=2)
    entry = entry.replace(
        "</entry>", '<link title="doi" href="http://dx.doi.org/10.1000/xyz" rel="related"/></entry>'
    )
    (parsed,) = parse_api(atom_feed([entry], total=1)).entries
    assert (parsed.arxiv_id, parsed.version, parsed.doi) == ("cs/0112017", 2, "10.1000/xyz")


def test_api_error_entry_is_reported():
    error = (
        "<entry><id>http://arxiv.org/api/errors#incorrect_id_format_for_1234</id>"
        "<title>Error</title><summary>incorrect id format for 1234</summary></entry>"
    )
    with pytest.raises(IngestError, match="refused the query: incorrect id format for 1234"):
        parse_api(atom_feed([error], total=1))


def test_api_empty_page_quirk_is_detected():
    page = parse_api(fixture_bytes("api_empty_page.xml"))
    assert page.entries == [] and page.total_results == 412 and page.start_index == 100
    assert page.is_empty_page
    # An honestly empty result is not the quirk.
    assert not parse_api(atom_feed([], total=0)).is_empty_page
    # Nor is a page past the end.
    assert not parse_api(atom_feed([], total=100, start=100)).is_empty_page


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("malformed.xml", r"not well-formed XML \(mismatched tag at line 9"),
        ("truncated.xml", r"truncated \(XML ends early at line 34"),
        ("error_503.html", "HTML page \\(“503 Service Unavailable”\\) instead of an arXiv feed"),
    ],
)
def test_broken_content_raises_a_clear_error(name, message):
    with pytest.raises(IngestError, match=message):
        parse_feed(fixture_bytes(name))


def test_truncated_feed_is_an_error_even_though_its_first_items_are_complete():
    content = fixture_bytes("truncated.xml")
    assert content.count(b"</item>") == 1  # feedparser alone would return one item
    with pytest.raises(IngestError, match="truncated"):
        parse_rss(content)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b'{"error": "rate limited"}', "not XML"),
        (b"\x00\x01\x02garbage", "not XML"),
        (b"<html><body>Bad Gateway</body></html>", "HTML page"),
        (
            b'<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml">'
            b"<head><title>Oops</title></head></html>",
            "HTML page \\(“Oops”\\)",
        ),
        (b"<?xml version='1.0'?><opml version='2.0'/>", "root element is <opml>"),
    ],
)
def test_garbage_is_rejected(content, message):
    with pytest.raises(IngestError, match=message):
        detect_format(content)


def test_format_detection():
    assert detect_format(fixture_bytes("rss_new.xml")) == "rss"
    assert detect_format(fixture_bytes("api_response.xml")) == "api"
    with pytest.raises(IngestError, match="Expected an arXiv RSS feed"):
        parse_rss(fixture_bytes("api_response.xml"))
    with pytest.raises(IngestError, match="Expected an arXiv API Atom response"):
        parse_api(fixture_bytes("rss_new.xml"))


def test_an_html_page_is_worth_retrying_but_broken_xml_is_not():
    with pytest.raises(FetchError):
        parse_feed(fixture_bytes("error_503.html"))
    for name in ("malformed.xml", "truncated.xml"):
        with pytest.raises(IngestError) as caught:
            parse_feed(fixture_bytes(name))
        assert not isinstance(caught.value, FetchError)
