"""What a bulk record says reaches the paper page whole: every version's date, every DOI, the
report number, affiliations as plain text (a numbered legend resolved author by author), and
no "et al" author. A later source that knows less takes none of it away."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from papers.arxiv.records import ParsedAuthor, ParsedFeed, ParsedRecord
from papers.history.oai import harvest
from papers.history.records import parse_snapshot_line
from papers.history.snapshot import import_snapshot
from papers.ingest import ingest_feed
from papers.models import Authorship, Paper
from tests.html import Page, page_text
from tests.papers.helpers import FIXTURES, Reply

pytestmark = pytest.mark.django_db

HISTORY = FIXTURES / "history"
SNAPSHOT = HISTORY / "snapshot_fields.jsonl"
REVISED = "/abs/2403.00201/"  # four versions, two DOIs, a report number, TeX affiliations
COLLABORATION = "/abs/2403.00202/"  # "The ZEBRA Collaboration, K. Amsel, et al"
LEGEND = "/abs/2403.00203/"  # arXivRaw, with a numbered affiliation legend

REVISED_VERSIONS = [
    "v1 Mon, 4 Mar 2024 10:00 UTC",
    "v2 Tue, 19 Mar 2024 08:15 UTC",
    "v3 Wed, 1 May 2024 17:45 UTC",
    "v4 Fri, 7 Jun 2024 12:00 UTC (this version)",
]


@pytest.fixture
def imported(cs_dc):
    import_snapshot(path=SNAPSHOT, categories=[cs_dc])


def history(response) -> list[str]:
    return Page.of(response).one("ol", cls="history--versions").texts("li")


def authors(response) -> list[str]:
    return Page.of(response).one("ul", aria_label="Authors").texts("li")


def test_the_snapshot_gives_every_version_its_date(imported, client):
    assert history(client.get(REVISED)) == REVISED_VERSIONS
    text = page_text(client.get(REVISED))
    assert "date not known here" not in text
    assert "Submitted on 4 March 2024 (v1), last revised 7 June 2024 (this version, v4)" in text


def test_every_doi_is_a_link_of_its_own_and_the_report_number_shows(imported, client):
    response = client.get(REVISED)
    page = Page.of(response)
    assert [link for link in page.links() if "doi.org" in link[0]] == [
        ("https://doi.org/10.1000/jds.2024.001", "10.1000/jds.2024.001"),
        ("https://doi.org/10.1000/jds.2025.017", "10.1000/jds.2025.017"),
    ]
    text = page_text(response)
    assert "Journal reference J. Distrib. Syst. 12 (2024) 1-20" in text
    assert "Report number WIEN-DS-24/07" in text
    assert "DOIs 10.1000/jds.2024.001 10.1000/jds.2025.017" in text


def test_affiliations_read_as_plain_text_like_the_names(imported, client):
    assert authors(client.get(REVISED)) == [
        "Mira Kovač (Universität Wien)",
        "Tomás León (León University, Spain)",
    ]


def test_et_al_is_no_author_and_has_no_page(imported, client):
    page = Page.of(client.get(COLLABORATION))
    # The page says the list stops short, as arXiv's does, but links no one called "et al".
    assert authors(client.get(COLLABORATION)) == ["The ZEBRA Collaboration", "K. Amsel", "et al."]
    assert [href for href, _ in page.links() if href.startswith("/author/")] == [
        "/author/The%20ZEBRA%20Collaboration/",
        "/author/K.%20Amsel/",
    ]
    assert client.get("/author/K. Amsel/").status_code == 200
    assert client.get("/author/et al/").status_code == 404
    assert not Authorship.objects.filter(name__startswith="et al").exists()
    # The category page's byline says it too.
    assert "The ZEBRA Collaboration, K. Amsel et al." in page_text(client.get("/list/cs.DC/"))


@pytest.fixture
def oai(arxiv_server, settings, sleeps):
    settings.ARXIV_OAI_URL = arxiv_server.url + "/oai"
    arxiv_server.route("/oai", Reply(200, (HISTORY / "oai_fields.xml").read_bytes()))
    return arxiv_server


def test_the_harvest_resolves_a_numbered_affiliation_legend(cs_dc, oai, client):
    harvest(set_spec="cs", categories=[cs_dc])

    response = client.get(LEGEND)
    # Each author has their own affiliations; the legend is nobody's.
    assert authors(response) == [
        "Piotr Nowak (University of Zielona Góra)",
        "Sara Ahmed (University of Zielona Góra; Ruhr-Universität Bochum)",
        "Rui Costa (ASI Data Center)",
    ]
    assert history(response) == [
        "v1 Wed, 6 Mar 2024 14:00 UTC",
        "v2 Thu, 11 Apr 2024 09:30 UTC",
        "v3 Tue, 18 Jun 2024 16:20 UTC (this version)",
    ]
    text = page_text(response)
    assert "Report number ZG-CS-2024-03" in text
    assert "DOI 10.1000/overlays.2024.143" in text


def test_the_snapshot_and_the_harvest_read_the_same_fields_alike():
    line = (SNAPSHOT.read_bytes().splitlines())[0]
    entry = parse_snapshot_line(line)
    assert entry.doi == "10.1000/jds.2024.001 10.1000/jds.2025.017"
    assert entry.report_no == "WIEN-DS-24/07"
    assert sorted(entry.version_dates) == [1, 2, 3, 4]
    assert entry.version_dates[3] == dt.datetime(2024, 5, 1, 17, 45, 30, tzinfo=dt.UTC)


def feed_v4() -> ParsedRecord:
    """The revised paper's fourth version as the daily RSS feed lists it: a replacement, no
    version dated, no affiliations, no DOI. A new record each time (a record is mutable)."""
    return ParsedRecord(
        arxiv_id="2403.00201",
        version=4,
        title="Gossip that survives four revisions",
        abstract="Epidemic broadcast with bounded fan-out, revised until it was right.",
        authors=[ParsedAuthor("Mira Kova\\v{c}"), ParsedAuthor("Tom\\'as Le\\'on")],
        categories=["cs.DC"],
        announce_type="replace",
    )


def _feed(entry: ParsedRecord) -> ParsedFeed:
    return ParsedFeed(format="rss", date=dt.date(2024, 6, 11), entries=[entry])


def test_a_later_feed_that_dates_nothing_keeps_every_date(imported, cs_dc, client):
    # The daily feed's replacement of the same version: RSS dates no version at all.
    rss = feed_v4()
    ingest_feed(category=cs_dc, parsed=_feed(rss), source="test")
    response = client.get(REVISED)
    assert history(response) == REVISED_VERSIONS
    # The feed had no affiliations: the ones known stay, as plain text.
    assert authors(response)[0] == "Mira Kovač (Universität Wien)"

    # The API's answer for a fifth version dates it (and v1), and the others stay dated.
    api = replace(
        rss,
        version=5,
        announce_type="",
        submitted_at=dt.datetime(2024, 3, 4, 10, 0, tzinfo=dt.UTC),
        updated_at=dt.datetime(2024, 7, 1, 9, 5, tzinfo=dt.UTC),
    )
    ingest_feed(category=cs_dc, parsed=_feed(api), source="test")
    assert history(client.get(REVISED)) == [
        *REVISED_VERSIONS[:3],
        "v4 Fri, 7 Jun 2024 12:00 UTC",
        "v5 Mon, 1 Jul 2024 09:05 UTC (this version)",
    ]


def test_an_import_completes_a_paper_the_feed_stored_and_a_rerun_changes_nothing(cs_dc, client):
    # The daily feed stored v4 as RSS has it: no version dated, no DOI, no report number.
    feed = feed_v4()
    ingest_feed(category=cs_dc, parsed=_feed(feed), source="test")
    assert "date not known here" in page_text(client.get(REVISED))

    first = import_snapshot(path=SNAPSHOT, categories=[cs_dc])
    assert (first.papers_created, first.papers_updated) == (1, 1)
    response = client.get(REVISED)
    assert history(response) == REVISED_VERSIONS
    assert "Report number WIEN-DS-24/07" in page_text(response)
    assert authors(response)[1] == "Tomás León (León University, Spain)"

    again = import_snapshot(path=SNAPSHOT, categories=[cs_dc])
    assert (again.papers_created, again.papers_updated) == (0, 0)


def test_a_paper_stored_before_these_fields_is_completed_by_the_next_import(
    imported, cs_dc, client
):
    # As an import before migration 0026 left it: affiliations unrendered, no version dated.
    old_byline = [
        {
            "name": "Mira Kova\\v{c}",
            "name_text": "Mira Kovač",
            "affiliation": 'Universit\\"at Wien',
        },
        {
            "name": "Tom\\'as Le\\'on",
            "name_text": "Tomás León",
            "affiliation": "Le\\'on University, Spain",
        },
    ]
    Paper.objects.filter(arxiv_id="2403.00201").update(
        authors=old_byline, version_dates=[], doi="10.1000/jds.2024.001", report_no=""
    )
    assert authors(client.get(REVISED))[0] == 'Mira Kovač (Universit\\"at Wien)'

    import_snapshot(path=SNAPSHOT, categories=[cs_dc])
    response = client.get(REVISED)
    assert authors(response) == [
        "Mira Kovač (Universität Wien)",
        "Tomás León (León University, Spain)",
    ]
    assert history(response) == REVISED_VERSIONS
    assert "DOIs 10.1000/jds.2024.001 10.1000/jds.2025.017" in page_text(response)


def test_the_kept_page_follows_a_new_report_number_and_doi(imported, client):
    assert "Report number WIEN-DS-24/07" in page_text(client.get(REVISED))  # kept now
    Paper.objects.filter(arxiv_id="2403.00201").update(
        report_no="WIEN-DS-24/07-R", doi="10.1000/jds.2026.005"
    )
    text = page_text(client.get(REVISED))
    assert "Report number WIEN-DS-24/07-R" in text
    assert "DOI 10.1000/jds.2026.005" in text and "jds.2024.001" not in text
