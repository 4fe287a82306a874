"""Bulk history: the metadata snapshot and OAI-PMH import the same papers the same way, list
them on the days arXiv's schedule gives, never disturb a day the daily feed ingested, resume
when interrupted, change nothing when run again, and pay no dividends."""

from __future__ import annotations

import datetime as dt
import gzip
import io
import logging
import shutil
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from market import trading
from market.dividends import pay_dividends_for_day
from market.models import Account, DividendEvent, Mention, Term
from papers.arxiv.errors import FetchError
from papers.arxiv.records import ParsedAuthor, ParsedFeed, ParsedRecord
from papers.calendar import announcement_date_for
from papers.history.oai import harvest
from papers.history.records import MalformedRecord, parse_created
from papers.history.snapshot import Progress, import_snapshot
from papers.ingest import ingest_feed
from papers.models import Category, HistorySource, IngestRun, Listing, Paper, PaperVersion
from tests.factories import buy, list_paper, make_paper
from tests.papers.helpers import FIXTURES, Reply, Request

pytestmark = pytest.mark.django_db

HISTORY = FIXTURES / "history"
SNAPSHOT = HISTORY / "snapshot.jsonl"
UTC = dt.UTC

# What the fixtures hold, listed as arXiv's schedule has it (New York time):
LISTED = [
    # Friday 14 Dec 2001, 05:00, before the deadline: announced that evening... on Sunday,
    # listed Monday. Its cs.NI is not among the categories imported.
    ("cs.DC", "cs/0112017", dt.date(2001, 12, 17), "new"),
    # Christmas Day 2023, a Monday, 10:00: no deadline that day; Tuesday's, listed Wednesday.
    ("cs.DC", "2312.00103", dt.date(2023, 12, 27), "new"),
    # Monday 8 Jan 2024, 10:00: listed Tuesday, new in its primary, cross-listed in the other.
    ("cs.DC", "2401.00101", dt.date(2024, 1, 9), "new"),
    ("cs.LG", "2401.00101", dt.date(2024, 1, 9), "cross"),
    # Friday 12 Jan 2024, 15:30, after the deadline: Monday's deadline, listed Tuesday.
    ("cs.DC", "2401.00102", dt.date(2024, 1, 16), "cross"),
    ("cs.LG", "2401.00102", dt.date(2024, 1, 16), "new"),
]
IMPORTED = sorted({arxiv_id for _, arxiv_id, _, _ in LISTED})


@pytest.fixture
def categories(cs_dc) -> list[Category]:
    cs_lg, _ = Category.objects.get_or_create(
        code="cs.LG",
        defaults={
            "name": "Machine Learning",
            "archive_code": "cs",
            "archive_name": "Computer Science",
        },
    )
    return [cs_dc, cs_lg]


def listings() -> list[tuple[str, str, dt.date, str]]:
    rows = Listing.objects.filter(approximate=True).values_list(
        "category__code", "paper__arxiv_id", "date", "announce_type"
    )
    return sorted(rows, key=lambda row: (row[2], row[1], row[0]))


def state() -> dict[str, object]:
    """Everything an import writes, independent of keys and clocks."""
    skip = {"id", "created_at", "modified_at", "stamp", "search_vector"}
    papers = [
        {name: value for name, value in row.items() if name not in skip}
        for row in Paper.objects.order_by("arxiv_id").values()
    ]
    versions = list(
        PaperVersion.objects.order_by("paper__arxiv_id", "number").values_list(
            "paper__arxiv_id", "number", "title", "abstract", "submitted_at"
        )
    )
    rows = Listing.objects.order_by("category__code", "paper__arxiv_id", "date").values_list(
        "category__code", "paper__arxiv_id", "date", "announce_type", "version", "approximate"
    )
    return {"papers": papers, "versions": versions, "listings": list(rows)}


def raw_state() -> dict[str, object]:
    """Every column, keys and clocks too: what a second run must leave exactly as it was."""
    return {
        "papers": list(Paper.objects.order_by("pk").values()),
        "versions": list(PaperVersion.objects.order_by("pk").values()),
        "listings": list(Listing.objects.order_by("pk").values()),
    }


@pytest.mark.parametrize(
    ("submitted", "listed"),
    [
        ("2024-01-12 15:30", "2024-01-16"),  # Friday afternoon → Monday's deadline → Tuesday
        ("2024-01-12 13:59", "2024-01-15"),  # Friday before the deadline → Monday
        ("2023-12-25 10:00", "2023-12-27"),  # Christmas (Monday): Tuesday's deadline
        ("2024-12-24 15:00", "2024-12-27"),  # after Christmas Eve's deadline: Thursday's
        ("2024-11-28 09:00", "2024-12-02"),  # Thanksgiving: Friday's deadline → Monday
        ("2026-01-01 09:00", "2026-01-05"),  # New Year's Day (Thursday): Friday's → Monday
        ("2024-01-13 11:00", "2024-01-16"),  # Saturday: Monday's deadline → Tuesday
    ],
)
def test_listing_days_follow_the_schedule_with_holidays(submitted, listed):
    local = dt.datetime.fromisoformat(submitted).replace(tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    assert announcement_date_for(local, holidays=True) == dt.date.fromisoformat(listed)


def test_the_api_backfill_still_ignores_holidays():
    christmas = dt.datetime(2023, 12, 25, 15, 0, tzinfo=UTC)
    assert announcement_date_for(christmas) == dt.date(2023, 12, 26)


def test_the_snapshot_imports_the_chosen_categories_typeset_and_listed(categories):
    source = import_snapshot(path=SNAPSHOT, categories=categories)

    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == IMPORTED
    assert listings() == LISTED
    assert not Listing.objects.filter(approximate=False).exists()
    # Lines 4 and 7 are malformed (cut off; a version date that is no date): counted, skipped.
    assert (source.records, source.kept, source.malformed) == (7, 4, 2)
    assert source.malformed_at == [4, 7]
    assert (source.papers_created, source.listings_created) == (4, 6)
    assert source.finished_at is not None

    paper = Paper.objects.get(arxiv_id="2401.00101")
    assert paper.title == "Straggler-aware consensus at scale"
    assert "<math" in paper.abstract_html and "41%" in paper.abstract_html
    assert [author["name_text"] for author in paper.authors] == [
        "Ana Pérez",
        "Bo Li",
        "Dağlı Ahmet",
    ]
    assert paper.authors[0]["affiliation"] == "Univ. of X, Madrid"
    assert paper.categories == ["cs.DC", "cs.LG"] and paper.primary_category == "cs.DC"
    assert paper.submitted_at == dt.datetime(2024, 1, 8, 15, 0, tzinfo=UTC)

    revised = Paper.objects.get(arxiv_id="2312.00103")
    assert (revised.version, revised.comment) == (2, "v2: typos fixed")
    assert revised.submitted_at == dt.datetime(2023, 12, 25, 15, 0, tzinfo=UTC)
    assert revised.updated_at == dt.datetime(2024, 1, 2, 10, 0, tzinfo=UTC)
    friday = Paper.objects.get(arxiv_id="2401.00102")
    assert (friday.doi, friday.journal_ref) == ("10.1145/1234567.7654321", "Proc. MLSys 2024")


def test_the_categories_default_to_the_enabled_ones(categories):
    Category.objects.update(ingest_enabled=False)
    Category.objects.filter(code="cs.LG").update(ingest_enabled=True)
    out = io.StringIO()
    call_command("import_snapshot", str(SNAPSHOT), stdout=out, stderr=io.StringIO())

    assert {code for code, *_ in listings()} == {"cs.LG"}
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == ["2401.00101", "2401.00102"]
    # The cut-off line is reported whatever it names; the record with a bad date is cs.DC's.
    assert "1 malformed record skipped, at: 4" in out.getvalue()


def test_since_and_until_choose_by_first_submission(categories):
    import_snapshot(
        path=SNAPSHOT, categories=categories, since=dt.date(2024, 1, 1), until=dt.date(2024, 1, 10)
    )
    assert sorted(Paper.objects.values_list("arxiv_id", flat=True)) == ["2401.00101"]


@pytest.mark.django_db(transaction=True)
def test_an_import_leaves_the_tables_pages_scan_by_index_vacuumed(categories):
    # An index-only scan (an author's page, a category's days) skips the table only where a
    # vacuum marked its pages all-visible; autovacuum may come much later.
    import_snapshot(path=SNAPSHOT, categories=categories)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname FROM pg_stat_user_tables WHERE last_vacuum IS NOT NULL"
            " AND relname IN ('papers_authorship', 'papers_categoryday', 'papers_listing')"
        )
        assert sorted(row[0] for row in cursor.fetchall()) == [
            "papers_authorship", "papers_categoryday", "papers_listing"
        ]  # fmt: skip


def test_a_second_run_changes_nothing(categories):
    import_snapshot(path=SNAPSHOT, categories=categories)
    before = raw_state()

    again = import_snapshot(path=SNAPSHOT, categories=categories)

    assert raw_state() == before
    assert (again.records, again.papers_created, again.papers_updated) == (7, 0, 0)
    assert (again.listings_created, again.malformed) == (0, 2)


def test_a_gzipped_snapshot_imports_the_same(categories, tmp_path):
    import_snapshot(path=SNAPSHOT, categories=categories)
    plain = state()
    Paper.objects.all().delete()
    packed = tmp_path / "snapshot.json.gz"
    with SNAPSHOT.open("rb") as source, gzip.open(packed, "wb") as target:
        shutil.copyfileobj(source, target)

    import_snapshot(path=packed, categories=categories)

    assert state() == plain


class Interrupted(Exception):
    pass


def test_an_interrupted_import_resumes_after_the_last_batch(categories, tmp_path):
    import_snapshot(path=SNAPSHOT, categories=categories)
    whole = state()
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()

    def stop_after_two(progress: Progress) -> None:
        if progress.source.kept == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        import_snapshot(path=SNAPSHOT, categories=categories, batch=1, on_progress=stop_after_two)
    stopped = HistorySource.objects.get()
    assert (stopped.kept, stopped.finished_at) == (2, None)
    assert Paper.objects.count() == 2
    read = stopped.line

    seen: list[int] = []
    resumed = import_snapshot(
        path=SNAPSHOT, categories=categories, batch=1, on_progress=lambda p: seen.append(p.done)
    )

    assert state() == whole
    # Every line was read once over the two runs: the counts are those of one whole run.
    assert (resumed.records, resumed.kept, resumed.malformed) == (7, 4, 2)
    assert resumed.malformed_at == [4, 7]
    assert resumed.papers_created == 4 and read == 2  # the second kept paper is on line 2


def test_a_day_the_daily_feed_ingested_is_never_disturbed(categories):
    cs_dc, cs_lg = categories
    # The daily feed ingested cs.DC's 9 January; and it listed one paper on another day.
    IngestRun.objects.create(
        category=cs_dc, date=dt.date(2024, 1, 9), source="feed", status=IngestRun.Status.SUCCEEDED
    )
    daily = make_paper(arxiv_id="2401.00102", title="Federated learning on a Friday afternoon")
    list_paper(daily, category=cs_dc, date=dt.date(2024, 1, 15), announce_type="cross")

    import_snapshot(path=SNAPSHOT, categories=categories)

    assert not Listing.objects.filter(category=cs_dc, date=dt.date(2024, 1, 9)).exists()
    assert Listing.objects.filter(category=cs_lg, paper__arxiv_id="2401.00101").exists()
    assert list(
        Listing.objects.filter(category=cs_dc, paper=daily).values_list("date", "approximate")
    ) == [(dt.date(2024, 1, 15), False)]
    # Its cs.LG listing is history's to make: the feed never listed it there.
    assert Listing.objects.filter(category=cs_lg, paper=daily, approximate=True).exists()


def test_the_daily_feed_replaces_an_approximate_listing_with_its_own(categories):
    cs_dc, _ = categories
    import_snapshot(path=SNAPSHOT, categories=categories)
    entry = ParsedRecord(
        arxiv_id="2401.00101",
        version=1,
        title="Straggler-aware consensus at scale",
        abstract="We show that things.",
        authors=[ParsedAuthor("Ana P\\'erez")],
        categories=["cs.DC", "cs.LG"],
        announce_type="new",
    )
    day = dt.date(2024, 1, 10)
    ingest_feed(
        category=cs_dc, parsed=ParsedFeed(format="rss", date=day, entries=[entry]), source="f"
    )

    assert list(
        Listing.objects.filter(category=cs_dc, paper__arxiv_id="2401.00101").values_list(
            "date", "approximate"
        )
    ) == [(day, False)]


def test_history_pays_no_dividends_and_the_books_balance(categories, trader):
    cs_dc, _ = categories
    term = Term.objects.create(phrase="consensus")
    long_ago = dt.datetime(2001, 1, 1, tzinfo=UTC)
    Term.objects.filter(pk=term.pk).update(listed_at=long_ago)
    buy(trader, term, 5, when=long_ago)
    cash = trading.balance(trader)

    import_snapshot(path=SNAPSHOT, categories=categories)
    # Even if a day's dividends were run over history's day, its listings pay nothing.
    summary = pay_dividends_for_day(category=cs_dc, date=dt.date(2024, 1, 9))

    assert summary.papers_scanned == 0
    assert not DividendEvent.objects.exists() and not Mention.objects.exists()
    assert trading.balance(trader) == cash
    assert Account.objects.filter(user=trader).exists()
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=out)
    assert out.getvalue().startswith("Ledger OK")


def test_bad_input_is_refused_with_a_message_and_changes_nothing(categories, tmp_path):
    with pytest.raises(CommandError, match="Unknown categories: cs.XX"):
        call_command("import_snapshot", str(SNAPSHOT), "--category", "cs.XX")
    with pytest.raises(CommandError, match="No such file"):
        call_command("import_snapshot", str(tmp_path / "missing.json"), "--category", "cs.DC")
    with pytest.raises(CommandError, match="--since must be a date"):
        call_command("import_snapshot", str(SNAPSHOT), "--since", "last year")
    assert not Paper.objects.exists() and not HistorySource.objects.exists()


# OAI-PMH --------------------------------------------------------------------------------


@pytest.fixture
def oai(arxiv_server, settings):
    """The OAI-PMH endpoint on loopback: arXiv's flow control first (503, Retry-After: 2),
    then two pages joined by a resumption token."""
    settings.ARXIV_OAI_URL = arxiv_server.url + "/oai"
    settings.ARXIV_HTTP_MAX_DELAY_SECONDS = 10  # the waits are recorded, not slept
    pages = {
        "": (HISTORY / "oai_page1.xml").read_bytes(),
        "6930231|1001": (HISTORY / "oai_page2.xml").read_bytes(),
    }
    state = {"busy": 1}

    def answer(request: Request) -> Reply:
        if state["busy"]:
            state["busy"] -= 1
            return Reply(503, b"Retry later", {"Retry-After": "2"})
        if request.param("from"):
            return Reply(200, (HISTORY / "oai_no_records.xml").read_bytes())
        return Reply(200, pages[request.param("resumptionToken")])

    arxiv_server.route_function("/oai", answer)
    return arxiv_server


def test_the_harvest_imports_the_same_papers_the_same_way(categories, oai, sleeps):
    import_snapshot(path=SNAPSHOT, categories=categories)
    from_snapshot = state()
    Paper.objects.all().delete()

    source = harvest(set_spec="cs", categories=categories)

    assert state() == from_snapshot
    assert listings() == LISTED
    # The 503's Retry-After was waited for; the token led to the second page.
    assert sleeps == [2.0]
    first, *_, last = oai.hits("/oai")
    assert (first.param("metadataPrefix"), first.param("set"), first.param("from")) == (
        "arXivRaw",
        "cs",
        "",
    )
    assert last.param("resumptionToken") == "6930231|1001"
    assert (source.kept, source.malformed, source.malformed_at) == (
        4,
        1,
        ["oai:arXiv.org:2401.00105"],
    )
    assert source.harvested_through == dt.date(2024, 1, 20) and source.token == ""


def test_the_next_harvest_asks_only_for_what_changed(categories, oai, sleeps):
    harvest(set_spec="cs", categories=categories)
    before = raw_state()

    again = harvest(set_spec="cs", categories=categories)

    assert oai.hits("/oai")[-1].param("from") == "2024-01-20"
    assert raw_state() == before
    assert (again.records, again.papers_created, again.finished_at is not None) == (0, 0, True)


def test_an_interrupted_harvest_goes_on_from_its_token(categories, oai, sleeps, arxiv_server):
    def broken(request: Request) -> Reply:
        if request.param("resumptionToken"):
            return Reply(500, b"oops")
        return Reply(200, (HISTORY / "oai_page1.xml").read_bytes())

    arxiv_server.route_function("/oai", broken)
    with pytest.raises(FetchError):
        harvest(set_spec="cs", categories=categories)
    stopped = HistorySource.objects.get()
    assert (stopped.token, stopped.kept, stopped.finished_at) == ("6930231|1001", 2, None)

    asked: list[Request] = []

    def mended(request: Request) -> Reply:
        asked.append(request)
        return Reply(200, (HISTORY / "oai_page2.xml").read_bytes())

    arxiv_server.route_function("/oai", mended)
    done = harvest(set_spec="cs", categories=categories)

    assert [request.param("resumptionToken") for request in asked] == ["6930231|1001"]
    assert listings() == LISTED
    assert (done.kept, done.malformed, done.finished_at is not None) == (4, 1, True)


def test_the_harvest_command_reports_and_refuses_bad_dates(categories, oai, sleeps):
    out = io.StringIO()
    call_command(
        "harvest", "--category", "cs.DC", "--category", "cs.LG", stdout=out, stderr=io.StringIO()
    )
    assert "4 in the chosen categories" in out.getvalue()
    assert "The next harvest asks from 2024-01-20." in out.getvalue()
    with pytest.raises(CommandError, match="before --from"):
        call_command("harvest", "--from", "2024-02-01", "--until", "2024-01-01")


def test_the_scheduled_harvest_keeps_the_enabled_categories_current(categories, oai, sleeps):
    from papers.tasks import harvest_history

    Category.objects.filter(code__in=["cs.DC", "cs.LG"]).update(ingest_enabled=True)
    Category.objects.exclude(code__in=["cs.DC", "cs.LG"]).update(ingest_enabled=False)

    harvest_history()

    assert listings() == LISTED


class ExpiringTokens:
    """An OAI-PMH stand-in whose resumption tokens can die, as arXiv's do: every pass gets a
    token of its own after page 1, and a token no longer honoured is answered with arXiv's
    badResumptionToken error (status 200, as arXiv sends it)."""

    def __init__(self, server) -> None:
        self.server = server
        self.issued = 0
        self.live: set[str] = set()
        self.refuse_all = False
        server.route_function("/oai", self.answer)

    def answer(self, request: Request) -> Reply:
        token = request.param("resumptionToken")
        if not token:
            self.issued += 1
            fresh = f"{6930230 + self.issued}|1001"
            self.live.add(fresh)
            page = (HISTORY / "oai_page1.xml").read_bytes()
            return Reply(200, page.replace(b"6930231|1001", fresh.encode()))
        if token in self.live and not self.refuse_all:
            return Reply(200, (HISTORY / "oai_page2.xml").read_bytes())
        return Reply(200, (HISTORY / "oai_bad_token.xml").read_bytes())

    def asked(self) -> list[tuple[str, str]]:
        """(resumptionToken, from) of each request, in order."""
        return [
            (hit.param("resumptionToken"), hit.param("from")) for hit in self.server.hits("/oai")
        ]


@pytest.fixture
def tokens(arxiv_server, settings) -> ExpiringTokens:
    settings.ARXIV_OAI_URL = arxiv_server.url + "/oai"
    return ExpiringTokens(arxiv_server)


def interrupted_after_a_completed_harvest(categories, tokens: ExpiringTokens) -> None:
    """A harvest that completed (the next asks from 2024-01-20), then one stopped by its time
    budget after page 1, leaving its token stored: the token then dies (a night, a weekend)."""
    assert harvest(set_spec="cs", categories=categories).harvested_through == dt.date(2024, 1, 20)
    stopped = harvest(set_spec="cs", categories=categories, max_seconds=0)
    assert (stopped.token, stopped.finished_at) == ("6930232|1001", None)
    tokens.live.clear()


REFUSED = (
    "The OAI-PMH server refused: badResumptionToken The resumptionToken supplied is illegal for "
    "this repository"
)


def test_a_refused_token_is_dropped_and_the_same_run_starts_again_from_the_last_completed_day(
    categories, tokens, caplog
):
    interrupted_after_a_completed_harvest(categories, tokens)
    Paper.objects.all().delete()
    out = io.StringIO()

    with caplog.at_level(logging.WARNING, logger="papers.history.oai"):
        call_command(
            "harvest", "--category", "cs.DC", "--category", "cs.LG", stdout=out, stderr=out
        )

    assert tokens.asked()[-3:] == [
        ("6930232|1001", ""),  # the dead token, refused
        ("", "2024-01-20"),  # a fresh pass from the last day a harvest completed
        ("6930233|1001", ""),
    ]
    assert listings() == LISTED
    assert "The next harvest asks from 2024-01-20." in out.getvalue()
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warning == (
        f"Harvest of cs: {REFUSED}; the token is dropped, starting again from 2024-01-20 (the "
        "last day a harvest completed)"
    )
    source = HistorySource.objects.get()
    assert (source.token, source.finished_at is not None, source.kept) == ("", True, 4)


def test_a_token_refused_twice_fails_the_run_and_the_next_run_starts_again_by_itself(
    categories, tokens, caplog
):
    from papers.tasks import harvest_history

    interrupted_after_a_completed_harvest(categories, tokens)
    tokens.refuse_all = True  # the fresh pass's token dies too: not mere expiry

    with pytest.raises(CommandError) as stopped:
        call_command("harvest", "--category", "cs.DC", "--category", "cs.LG", stdout=io.StringIO())

    assert str(stopped.value) == (
        f"Harvest of cs stopped: {REFUSED}. The token is dropped: the next harvest starts again "
        "from 2024-01-20 (the last day a harvest completed)."
    )
    assert tokens.asked()[-3:] == [("6930232|1001", ""), ("", "2024-01-20"), ("6930233|1001", "")]
    assert HistorySource.objects.get().token == ""

    # The next hourly harvest, with nobody's help, once arXiv honours tokens again.
    tokens.refuse_all = False
    Category.objects.filter(code__in=["cs.DC", "cs.LG"]).update(ingest_enabled=True)
    Category.objects.exclude(code__in=["cs.DC", "cs.LG"]).update(ingest_enabled=False)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="papers.history.oai"):
        harvest_history()

    assert tokens.asked()[-2:] == [("", "2024-01-20"), ("6930234|1001", "")]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "The last harvest of cs stopped on a resumption token arXiv refused: starting again "
        "from 2024-01-20 (the last day a harvest completed)"
    ]
    source = HistorySource.objects.get()
    assert (source.token, source.finished_at is not None) == ("", True)
    assert listings() == LISTED


def test_an_error_page_instead_of_a_page_stops_the_harvest_quoting_it_and_keeps_the_token(
    categories, oai, sleeps, arxiv_server
):
    harvest(set_spec="cs", categories=categories, max_seconds=0)

    def down(request: Request) -> Reply:
        return Reply(200, b"<html><body><h1>502 Bad Gateway</h1><hr>proxy</body></html>")

    arxiv_server.route_function("/oai", down)
    with pytest.raises(FetchError, match="HTML page \\(“502 Bad Gateway proxy”\\)"):
        harvest(set_spec="cs", categories=categories)

    # A page that never arrived says nothing about the token: the next run goes on with it.
    assert HistorySource.objects.get().token == "6930231|1001"


def test_no_records_matching_is_nothing_new_not_an_error(categories, oai, sleeps):
    harvest(set_spec="cs", categories=categories)

    out = io.StringIO()
    call_command("harvest", "--category", "cs.DC", "--category", "cs.LG", stdout=out)

    assert oai.hits("/oai")[-1].param("from") == "2024-01-20"
    assert "The next harvest asks from 2024-01-27." in out.getvalue()
    source = HistorySource.objects.get()
    assert (source.records, source.token, source.finished_at is not None) == (0, "", True)


def test_fixtures_are_where_the_tests_say(categories):
    assert Path(SNAPSHOT).is_file()


@pytest.mark.parametrize(
    ("written", "moment"),
    [
        ("Mon, 2 Apr 2007 19:18:42 GMT", dt.datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)),
        ("Mon, 02 Apr 2007 15:18:42 -0400", dt.datetime(2007, 4, 2, 19, 18, 42, tzinfo=UTC)),
    ],
)
def test_version_dates_are_read_in_arxivs_spelling_and_others(written, moment):
    assert parse_created(written) == moment


@pytest.mark.parametrize(
    "written", ["Wed, 31 Feb 2007 10:00:00 GMT", "yesterday", "Mon, 2 Apr 1066 10:00:00 GMT", ""]
)
def test_an_impossible_version_date_is_malformed(written):
    with pytest.raises(MalformedRecord):
        parse_created(written)


def test_a_bounded_harvest_stops_after_a_page_and_the_next_goes_on(categories, oai, sleeps):
    first = harvest(set_spec="cs", categories=categories, max_seconds=0)
    assert (first.token, first.finished_at, first.kept) == ("6930231|1001", None, 2)

    second = harvest(set_spec="cs", categories=categories, max_seconds=0)

    assert oai.hits("/oai")[-1].param("resumptionToken") == "6930231|1001"
    assert (second.token, second.finished_at is not None, second.kept) == ("", True, 4)
    assert listings() == LISTED
