"""Storing parsed feeds: upserts, versions, listings, idempotence, failures, enrichment."""

from __future__ import annotations

import datetime as dt
import logging
import re

import pytest

from papers import ingest
from papers.arxiv.documents import parse_feed
from papers.arxiv.errors import IngestError
from papers.ingest import ingest_category, ingest_feed
from papers.models import Category, IngestRun, Listing, Paper, PaperVersion
from papers.signals import listings_announced
from papers.typesetting import TYPESETTER_VERSION
from tests.html import Page
from tests.papers.helpers import FIXTURES, SAMPLE, Reply, atom_entry, atom_feed, fixture_bytes

pytestmark = pytest.mark.django_db

NOV_24 = dt.date(2026, 11, 24)
NOV_25 = dt.date(2026, 11, 25)


def store(category: Category, name: str) -> IngestRun:
    return ingest_feed(category=category, parsed=parse_feed(fixture_bytes(name)), source=name)


def database_state() -> dict[str, object]:
    """Everything an ingest writes, to compare before and after."""
    return {
        "papers": list(Paper.objects.order_by("pk").values()),
        "versions": list(PaperVersion.objects.order_by("pk").values()),
        "listings": list(Listing.objects.order_by("pk").values()),
    }


def test_new_feed_creates_typeset_papers_listings_and_versions(cs_dc):
    run = store(cs_dc, "rss_new.xml")

    assert (run.status, run.date, run.items) == (IngestRun.Status.SUCCEEDED, NOV_24, 2)
    assert (run.papers_created, run.papers_updated, run.listings_created) == (2, 0, 2)
    assert run.finished_at is not None and run.error == ""

    paper = Paper.objects.get(arxiv_id="2611.18201")
    assert paper.version == 1
    assert paper.primary_category == "cs.DC"
    assert paper.categories == ["cs.DC", "cs.LG"]
    assert paper.license == "http://creativecommons.org/licenses/by/4.0/"
    assert paper.abstract.startswith("Stragglers dominate")
    # Typeset at ingest time: MathML for the maths, escaped % as a percent sign.
    assert paper.typesetter_version == TYPESETTER_VERSION
    assert "<math" in paper.abstract_html and "41%" in paper.abstract_html
    assert paper.title_html == paper.title  # nothing to typeset in this title
    assert paper.authors == [
        {"name": name, "name_text": name, "affiliation": "", "affiliation_text": ""}
        for name in ("Priya Raman", "Tomasz Nowak", "Lena Hoffmann")
    ]
    assert paper.authors_text == "Priya Raman, Tomasz Nowak, Lena Hoffmann"
    assert list(paper.versions.values_list("number", "title")) == [(1, paper.title)]

    raft = Paper.objects.get(arxiv_id="2611.18215")
    assert "<em>consensus</em>" in raft.abstract_html
    assert raft.doi == "10.1145/3711111.3722222"
    assert raft.journal_ref == "Proc. EuroSys 2027, pp. 101--115"

    listings = Listing.objects.filter(category=cs_dc, date=NOV_24)
    assert sorted(listings.values_list("paper__arxiv_id", "announce_type", "version")) == [
        ("2611.18201", "new", 1),
        ("2611.18215", "new", 1),
    ]


def test_author_names_are_rendered_from_tex(cs_dc):
    store(cs_dc, "rss_authors.xml")
    paper = Paper.objects.get(arxiv_id="2611.19033")

    assert [a["name_text"] for a in paper.authors] == [
        "Ana Pérez",
        "Bo Li",
        "Dağlı Ahmet",
        "Jürgen Müller",
        "Zsófia Szöllősi",
        "Ngozi Okafor",
        "Kenji Sato",
        "Oluwaseun Adeyemi",
    ]
    assert paper.authors[0]["name"] == "Ana P\\'erez"  # the raw TeX is kept too
    assert paper.authors[0]["affiliation"] == "Univ. of X, Madrid, Spain"
    assert paper.authors[4]["affiliation"] == "R\\'enyi Institute (HUN-REN), Budapest"
    assert paper.authors_text.startswith("Ana Pérez, Bo Li, Dağlı Ahmet, Jürgen Müller")
    assert paper.short_authors == "Ana Pérez, Bo Li, Dağlı Ahmet et al. (+5 more)"


def test_cross_list_keeps_the_other_primary(cs_dc):
    run = store(cs_dc, "rss_cross.xml")
    listing = Listing.objects.get(category=cs_dc)

    assert run.listings_created == 1
    assert listing.announce_type == Listing.AnnounceType.CROSS
    assert listing.paper.primary_category == "cs.LG"
    assert listing.paper.categories == ["cs.LG", "cs.DC", "cs.PF"]


def test_rerunning_the_same_feed_changes_nothing(cs_dc):
    for name in ("rss_new.xml", "rss_cross.xml", "rss_replace.xml", "rss_replace_cross.xml"):
        store(cs_dc, name)
    before = database_state()

    again = [store(cs_dc, name) for name in ("rss_new.xml", "rss_replace.xml", "rss_cross.xml")]

    assert database_state() == before  # same rows, same values, same modified_at
    for run in again:
        assert run.status == IngestRun.Status.SUCCEEDED
        assert (run.papers_created, run.papers_updated, run.listings_created) == (0, 0, 0)
        assert run.items == 1 or run.items == 2


def test_replacement_updates_the_paper_and_keeps_the_old_version(cs_dc):
    store(cs_dc, "rss_new.xml")
    old = Paper.objects.get(arxiv_id="2611.18201")

    run = store(cs_dc, "rss_replace.xml")

    assert (run.papers_created, run.papers_updated, run.listings_created) == (0, 1, 1)
    paper = Paper.objects.get(arxiv_id="2611.18201")
    assert paper.version == 2
    assert paper.title.startswith("Straggler-Resilient")
    assert "prove a matching lower bound" in paper.abstract
    assert "47%" in paper.abstract_html
    assert paper.journal_ref == "Proc. MLSys 2027"
    assert paper.created_at == old.created_at and paper.modified_at > old.modified_at
    assert list(paper.versions.values_list("number", "title", "abstract")) == [
        (1, old.title, old.abstract),
        (2, paper.title, paper.abstract),
    ]
    listings = paper.listings.order_by("date")
    assert list(listings.values_list("date", "announce_type", "version")) == [
        (NOV_24, "new", 1),
        (NOV_25, "replace", 2),
    ]


def test_replacement_of_a_paper_never_seen_before(cs_dc):
    run = store(cs_dc, "rss_replace_cross.xml")

    assert (run.papers_created, run.listings_created) == (1, 1)
    paper = Paper.objects.get(arxiv_id="2609.04417")
    assert paper.version == 3 and paper.primary_category == "cs.NI"
    assert list(paper.versions.values_list("number", flat=True)) == [3]
    assert paper.listings.get().announce_type == Listing.AnnounceType.REPLACE_CROSS
    # The indented line was a paragraph break, so the typesetter made two paragraphs.
    assert len(Page.parse(paper.abstract_html).select("p")) == 2


def test_an_older_version_arriving_later_does_not_roll_the_paper_back(cs_dc):
    store(cs_dc, "rss_replace.xml")
    newer = Paper.objects.get(arxiv_id="2611.18201")

    run = store(cs_dc, "rss_new.xml")

    paper = Paper.objects.get(arxiv_id="2611.18201")
    assert (paper.version, paper.title, paper.modified_at) == (2, newer.title, newer.modified_at)
    assert run.papers_updated == 0
    assert list(paper.versions.values_list("number", flat=True)) == [1, 2]
    assert paper.versions.get(number=1).title.startswith("Straggler-Aware")
    assert paper.listings.count() == 2


def test_a_paper_listed_in_two_categories_is_stored_once(cs_dc):
    cs_lg = Category.objects.get(code="cs.LG")
    store(cs_dc, "rss_cross.xml")
    lg_feed = parse_feed(fixture_bytes("rss_cross.xml"))
    lg_feed.category = "cs.LG"
    lg_feed.entries[0].announce_type = "new"

    run = ingest_feed(category=cs_lg, parsed=lg_feed, source="cs.LG")

    assert (run.papers_created, run.papers_updated, run.listings_created) == (0, 0, 1)
    assert Paper.objects.count() == 1
    assert sorted(Listing.objects.values_list("category__code", "announce_type")) == [
        ("cs.DC", "cross"),
        ("cs.LG", "new"),
    ]


def test_empty_feed_records_a_succeeded_run_with_nothing_in_it(cs_dc):
    run = store(cs_dc, "rss_empty.xml")

    assert run.status == IngestRun.Status.SUCCEEDED
    assert (run.items, run.papers_created, run.listings_created) == (0, 0, 0)
    assert run.date == dt.date(2026, 11, 28)
    assert not Paper.objects.exists() and not Listing.objects.exists()


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("Feed error for query: http://rss.arxiv.org/rss/cs.DC", "arXiv answered with an error"),
        ("Scheduled maintenance", "does not say it is an arXiv listing (“Scheduled maintenance”)"),
        ("", "does not say it is an arXiv listing (no title)"),
    ],
)
def test_an_itemless_feed_is_an_empty_day_only_when_it_says_it_is_a_listing(
    cs_dc, tmp_path, title, message
):
    saved = tmp_path / "cs.DC.rss"
    saved.write_bytes(
        fixture_bytes("rss_empty.xml").replace(
            b"<title>cs.DC updates on arXiv.org</title>", f"<title>{title}</title>".encode()
        )
    )

    with pytest.raises(IngestError, match=re.escape(message)):
        ingest_category(category=cs_dc, file=saved)

    run = IngestRun.objects.get()
    assert (run.status, run.date, run.items) == (IngestRun.Status.FAILED, None, 0)
    assert message in run.error


def test_a_failure_midway_writes_nothing_but_a_failed_run(cs_dc, monkeypatch):
    store(cs_dc, "rss_new.xml")
    before = database_state()
    real_typeset = ingest.typeset_paper
    calls: list[str] = []

    def typeset_then_fail(paper):
        calls.append(paper.arxiv_id)
        if len(calls) == 2:
            raise RuntimeError("typesetter exploded")
        real_typeset(paper)

    monkeypatch.setattr(ingest, "typeset_paper", typeset_then_fail)
    # The replacement (1st paper typeset) and a new cross-list in one feed: the 2nd one fails.
    parsed = parse_feed(fixture_bytes("rss_replace.xml"))
    parsed.entries += parse_feed(fixture_bytes("rss_cross.xml")).entries

    with pytest.raises(IngestError, match="Storing the feed failed: typesetter exploded"):
        ingest_feed(category=cs_dc, parsed=parsed, source="combined")

    assert calls == ["2611.18201", "2611.17988"]
    assert database_state() == before  # the replacement was rolled back too
    failed = IngestRun.objects.get(status=IngestRun.Status.FAILED)
    assert failed.error == "Storing the feed failed: typesetter exploded"
    assert failed.finished_at is not None
    assert (failed.papers_created, failed.papers_updated, failed.listings_created) == (0, 0, 0)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("malformed.xml", "not well-formed XML"),
        ("truncated.xml", "truncated"),
        ("error_503.html", "HTML page"),
    ],
)
def test_unreadable_files_leave_a_failed_run_and_nothing_else(cs_dc, name, message):
    with pytest.raises(IngestError, match=message):
        ingest_category(category=cs_dc, file=FIXTURES / name, enrich=False)

    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.FAILED
    assert message in run.error
    assert run.source == str(FIXTURES / name)
    assert not Paper.objects.exists() and not Listing.objects.exists()


def test_a_feed_for_another_category_is_refused(cs_dc):
    cs_lg = Category.objects.get(code="cs.LG")
    with pytest.raises(IngestError, match="The feed is for cs.DC, not cs.LG"):
        store(cs_lg, "rss_new.xml")
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED
    assert not Paper.objects.exists()


def test_people_fields_survive_a_replacement(cs_dc):
    store(cs_dc, "rss_new.xml")
    Paper.objects.filter(arxiv_id="2611.18201").update(hidden=True)
    store(cs_dc, "rss_replace.xml")
    assert Paper.objects.get(arxiv_id="2611.18201").hidden is True


def test_outdated_typesetting_is_redone_by_a_rerun(cs_dc):
    store(cs_dc, "rss_new.xml")
    Paper.objects.update(typesetter_version=0, abstract_html="stale")

    run = store(cs_dc, "rss_new.xml")

    assert run.papers_updated == 2
    for paper in Paper.objects.all():
        assert paper.typesetter_version == TYPESETTER_VERSION
        assert "<math" in paper.abstract_html


@pytest.fixture
def announced():
    """Every `listings_announced` signal sent, as (category code, date)."""
    sent: list[tuple[str, dt.date]] = []

    def receiver(sender, *, category, date, **kwargs):
        assert sender is Category
        sent.append((category.code, date))

    listings_announced.connect(receiver, dispatch_uid="test-announced")
    yield sent
    listings_announced.disconnect(dispatch_uid="test-announced")


def test_listings_are_announced_once_the_feed_commits(
    cs_dc, announced, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        store(cs_dc, "rss_new.xml")
    assert announced == []  # nothing before the commit: receivers must see the listings
    for callback in callbacks:
        callback()
    assert announced == [("cs.DC", NOV_24)]

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        store(cs_dc, "rss_empty.xml")
    assert callbacks == [] and announced == [("cs.DC", NOV_24)]  # no listings, no signal


def test_a_feed_spanning_days_announces_each_day_once(
    cs_dc, announced, django_capture_on_commit_callbacks
):
    # An API response without a date: each entry is dated by its submission.
    content = atom_feed(
        [
            atom_entry("2611.00001", published="2026-11-03T10:00:00Z"),  # Tuesday → Wednesday
            atom_entry("2611.00002", published="2026-11-02T10:00:00Z"),  # Monday → Tuesday
            atom_entry("2611.00003", published="2026-11-02T12:00:00Z"),  # Monday → Tuesday
        ],
        total=3,
    )
    with django_capture_on_commit_callbacks(execute=True):
        ingest_feed(category=cs_dc, parsed=parse_feed(content), source="test")

    assert announced == [("cs.DC", dt.date(2026, 11, 3)), ("cs.DC", dt.date(2026, 11, 4))]


def test_a_failed_feed_announces_nothing(
    cs_dc, announced, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(ingest, "typeset_paper", lambda paper: 1 / 0)
    with django_capture_on_commit_callbacks(execute=True) as callbacks, pytest.raises(IngestError):
        store(cs_dc, "rss_new.xml")
    assert callbacks == [] and announced == []


def test_a_failing_receiver_fails_neither_the_ingest_nor_the_others(
    cs_dc, announced, django_capture_on_commit_callbacks
):
    def broken(**kwargs):
        raise RuntimeError("the market is down")

    listings_announced.connect(broken, dispatch_uid="test-broken")
    try:
        with django_capture_on_commit_callbacks(execute=True):
            run = store(cs_dc, "rss_new.xml")
    finally:
        listings_announced.disconnect(dispatch_uid="test-broken")
    assert run.status == IngestRun.Status.SUCCEEDED
    assert Listing.objects.filter(category=cs_dc).count() == 2
    assert announced == [("cs.DC", NOV_24)]  # the other receivers still heard of it


def test_papers_imports_no_later_app():
    """papers ← market ← accounts: nothing in papers may import market or accounts."""
    import ast
    from pathlib import Path

    root = Path(ingest.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{path.relative_to(root)}: {name}"
                for name in names
                if name.split(".")[0] in {"market", "accounts"}
            ]
    assert offenders == []


# arXiv announced Tuesday 24 November's listing on Monday 23 November at 20:00 New York time
# (EST, UTC-5): 01:00 UTC on the 24th.
NOV_24_ANNOUNCED = dt.datetime(2026, 11, 24, 1, 0, tzinfo=dt.UTC)


def test_every_kind_of_ingest_records_when_arxiv_announced_the_day(cs_dc, arxiv_server, tmp_path):
    rss = store(cs_dc, "rss_new.xml")
    feed = tmp_path / "cs.DC.rss"
    feed.write_bytes(fixture_bytes("rss_new.xml"))
    from_file = ingest_category(category=cs_dc, file=feed, enrich=False)
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    fetched = ingest_category(category=cs_dc, enrich=False)
    api = ingest_feed(
        category=cs_dc,
        parsed=parse_feed(fixture_bytes("api_response.xml"), date=NOV_24),
        source="api",
    )

    for run in (rss, from_file, fetched, api):
        run.refresh_from_db()
        assert (run.date, run.announced_at) == (NOV_24, NOV_24_ANNOUNCED)


def test_a_run_without_a_day_has_no_announcement_instant(cs_dc):
    with pytest.raises(IngestError):
        ingest_category(category=cs_dc, file=FIXTURES / "truncated.xml", enrich=False)
    assert IngestRun.objects.get().announced_at is None


def test_three_sample_days_in_a_row(cs_dc):
    days = sorted(SAMPLE.glob("cs.DC-*.rss"))
    assert len(days) == 3

    runs = [ingest_category(category=cs_dc, file=path, enrich=False) for path in days]

    dates = [run.date for run in runs]
    assert dates == [dt.date(2026, 11, 24), NOV_25, dt.date(2026, 11, 26)]
    for run in runs:
        assert run.status == IngestRun.Status.SUCCEEDED
        assert 12 <= run.items <= 20
        assert run.listings_created == run.items
    types = set(Listing.objects.values_list("announce_type", flat=True))
    assert types == {"new", "cross", "replace", "replace-cross"}
    # Some papers announced new on one day are replaced on a later one.
    assert PaperVersion.objects.filter(number__gt=1, paper__versions__number=1).exists()
    assert all(paper.typesetter_version == TYPESETTER_VERSION for paper in Paper.objects.all())


# ------------------------------------------------------------------------------------------
# Fetching and enrichment against a local stand-in for arXiv
# ------------------------------------------------------------------------------------------


def test_ingest_fetches_the_category_feed(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))

    run = ingest_category(category=cs_dc)

    assert run.status == IngestRun.Status.SUCCEEDED and run.papers_created == 2
    assert run.source == f"{arxiv_server.url}/rss/cs.DC"
    (request,) = arxiv_server.requests
    assert request.headers["User-Agent"].startswith("PeerRevenue/")


def test_enrichment_fills_in_what_the_feed_lacks(cs_dc, arxiv_server, settings):
    settings.ARXIV_ENRICH = True
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    arxiv_server.route("/api/query", Reply(200, fixture_bytes("api_response.xml")))

    run = ingest_category(category=cs_dc)

    assert run.status == IngestRun.Status.SUCCEEDED
    (api,) = arxiv_server.hits("/api/query")
    assert api.param("id_list") == "2611.18201,2611.18215"
    assert api.param("max_results") == "2"
    paper = Paper.objects.get(arxiv_id="2611.18201")
    assert paper.comment == "14 pages, 9 figures"
    assert paper.submitted_at == dt.datetime(2026, 11, 23, 16, 2, 11, tzinfo=dt.UTC)
    assert paper.updated_at == paper.submitted_at
    assert [a["affiliation"] for a in paper.authors] == [
        "IIT Madras",
        "University of Warsaw; IDEAS NCBR",
        "",
    ]
    # The feed's text wins over the API's wrapping of the same abstract.
    assert "\n" not in paper.abstract
    assert Paper.objects.get(arxiv_id="2611.18215").comment == "Accepted at EuroSys 2027"

    # An unenriched re-run of the same feed must not erase what enrichment added.
    before = database_state()
    again = ingest_category(category=cs_dc, enrich=False)
    assert (again.papers_updated, again.listings_created) == (0, 0)
    assert database_state() == before


def test_enrichment_failure_does_not_fail_the_ingest(cs_dc, arxiv_server, settings, caplog):
    settings.ARXIV_ENRICH = True
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    arxiv_server.route("/api/query", Reply(500, b"Internal Server Error"))

    with caplog.at_level(logging.WARNING, logger="papers.ingest"):
        run = ingest_category(category=cs_dc)

    assert run.status == IngestRun.Status.SUCCEEDED and run.papers_created == 2
    assert Paper.objects.get(arxiv_id="2611.18201").comment == ""
    assert "enrichment failed" in caplog.text
    assert len(arxiv_server.hits("/api/query")) == 3  # the retries were tried first


def test_enrichment_is_off_with_the_setting_or_the_flag(cs_dc, arxiv_server, settings):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    arxiv_server.route("/api/query", Reply(200, fixture_bytes("api_response.xml")))

    settings.ARXIV_ENRICH = False
    ingest_category(category=cs_dc)
    settings.ARXIV_ENRICH = True
    ingest_category(category=cs_dc, enrich=False)

    assert arxiv_server.hits("/api/query") == []
    assert len(arxiv_server.hits("/rss/cs.DC")) == 2


def test_enrichment_requests_batches_of_at_most_100(settings, arxiv_server):
    from papers.arxiv.enrichment import enrich
    from papers.arxiv.records import ParsedFeed, ParsedRecord

    arxiv_server.route("/api/query", Reply(200, fixture_bytes("api_response.xml")))
    entries = [
        ParsedRecord(
            arxiv_id=f"2611.{10000 + i}",
            version=1,
            title="t",
            abstract="a",
            authors=[],
            categories=["cs.DC"],
        )
        for i in range(230)
    ]
    enrich(ParsedFeed(format="rss", date=NOV_24, entries=entries))

    sizes = [len(hit.param("id_list").split(",")) for hit in arxiv_server.hits("/api/query")]
    assert sizes == [100, 100, 30]
