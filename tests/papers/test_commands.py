"""The ingest, backfill and retypeset management commands."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from papers.calendar import NEW_YORK
from papers.management.commands.ingest import Command as IngestCommand
from papers.models import IngestRun, Listing, Paper, PaperVersion
from papers.typesetting import TYPESETTER_VERSION
from tests.papers.helpers import FIXTURES, Reply, atom_entry, atom_feed

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


# ------------------------------------------------------------------------------------------
# ingest
# ------------------------------------------------------------------------------------------


def test_ingest_a_file_prints_a_summary(cs_dc):
    output = run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_new.xml"), "--no-enrich")

    assert output.strip() == (
        "cs.DC 2026-11-24: 2 items, 2 papers created, 0 updated, 2 listings created."
    )
    assert Listing.objects.filter(category=cs_dc, date=dt.date(2026, 11, 24)).count() == 2

    again = run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_new.xml"), "--no-enrich")
    assert "2 items, 0 papers created, 0 updated, 0 listings created" in again


def test_ingest_an_api_response_with_a_date(cs_dc):
    output = run(
        "ingest", "cs.DC", "--file", str(FIXTURES / "api_response.xml"), "--date", "2026-11-25"
    )

    assert output.startswith("cs.DC 2026-11-25: 3 items, 3 papers created")
    assert set(Listing.objects.values_list("date", flat=True)) == {dt.date(2026, 11, 25)}
    cross = Listing.objects.get(paper__arxiv_id="2611.17988")
    assert cross.announce_type == Listing.AnnounceType.CROSS  # primary cs.LG


def test_ingest_fetches_when_no_file_is_given(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, (FIXTURES / "rss_cross.xml").read_bytes()))

    output = run("ingest", "cs.DC", "--no-enrich")

    assert "1 items, 1 papers created, 0 updated, 1 listings created" in output
    assert len(arxiv_server.hits("/rss/cs.DC")) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cs.XX"], "Unknown category 'cs.XX'"),
        (["cs.DC", "--date", "24/11/2026"], "--date must be a date like 2026-11-24"),
        (["cs.DC", "--date", "2026-02-30"], "--date must be a date like"),
        (["cs.DC", "--file", "/nonexistent/feed.rss"], "No such file: /nonexistent/feed.rss"),
        (["cs.DC", "--file", str(FIXTURES)], "No such file"),
    ],
)
def test_ingest_bad_arguments_write_nothing(cs_dc, args, message):
    with pytest.raises(CommandError, match=message):
        run("ingest", *args)
    assert not IngestRun.objects.exists()
    assert not Paper.objects.exists()


def test_ingest_a_malformed_file_fails_and_is_recorded(cs_dc):
    with pytest.raises(CommandError, match="Ingest of cs.DC failed: The feed is truncated"):
        run("ingest", "cs.DC", "--file", str(FIXTURES / "truncated.xml"))

    failed = IngestRun.objects.get()
    assert failed.status == IngestRun.Status.FAILED and "truncated" in failed.error
    assert not Paper.objects.exists() and not Listing.objects.exists()


def test_ingest_a_feed_of_another_day_than_asked(cs_dc):
    with pytest.raises(CommandError, match="dated 2026-11-24, not 2026-11-23"):
        run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_new.xml"), "--date", "2026-11-23")
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


def test_ingest_from_the_command_line_exits_non_zero_with_the_message_on_stderr(
    cs_dc, monkeypatch, capsys
):
    # run_from_argv closes the database connections at the end; keep the test's one open.
    monkeypatch.setattr("django.core.management.base.connections.close_all", lambda: None)
    command = IngestCommand()

    with pytest.raises(SystemExit) as exit_info:
        command.run_from_argv(
            ["manage.py", "ingest", "cs.DC", "--file", str(FIXTURES / "error_503.html")]
        )

    assert exit_info.value.code != 0
    stderr = capsys.readouterr().err
    assert "Ingest of cs.DC failed: Received an HTML page (“503 Service Unavailable”)" in stderr
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


def test_ingest_of_arxivs_error_feed_fails_with_arxivs_words_and_marks_no_day(cs_dc):
    # Dated and well-formed like an empty day's feed: only its title and description differ.
    with pytest.raises(CommandError) as refused:
        run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_error.xml"))

    message = str(refused.value)
    assert message.startswith("Ingest of cs.DC failed: arXiv answered with an error feed")
    assert "“Feed error for query: http://rss.arxiv.org/rss/compsci”" in message
    assert "Bad archive 'compsci'. Valid archive names are: astro-ph, cs, math" in message
    failed = IngestRun.objects.get()
    assert (failed.status, failed.date) == (IngestRun.Status.FAILED, None)
    assert failed.error in message
    assert not IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED).exists()
    assert not Paper.objects.exists() and not Listing.objects.exists()


def test_ingest_of_an_empty_day_still_succeeds_with_nothing_in_it(cs_dc):
    output = run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_empty.xml"))

    assert output.strip() == (
        "cs.DC 2026-11-28: 0 items, 0 papers created, 0 updated, 0 listings created."
    )
    assert IngestRun.objects.get().status == IngestRun.Status.SUCCEEDED


# What stands in a file where a feed should be, when an error page was saved instead, and the
# words of it the failed run must quote.
ERROR_PAGES = [
    (  # HAProxy's page: no title, the status in a heading
        b"<html><body><h1>503 Service Unavailable</h1>\n"
        b"No server is available to handle this request.\n</body></html>\n",
        "Received an HTML page (“503 Service Unavailable No server is available to handle this "
        "request.”) instead of an arXiv feed",
    ),
    (  # a proxy's bare fragment
        b"<h1>Bad Gateway</h1><p>The proxy received an invalid response.</p>",
        "Received an HTML page (“Bad Gateway The proxy received an invalid response.”)",
    ),
    (  # a comment first, then HTML that is not XML: expat stops before the root
        b"<!-- upstream: mirror-3 -->\n<html lang=en><head><title>504 Gateway Time-out</title>"
        b"</head><body><p>The upstream timed out.</body></html>",
        "Received an HTML page (“504 Gateway Time-out”)",
    ),
    (  # the same, with a script before any text
        b"<html><head><script>var retry = 30;</script></head><body><p>Too many requests, "
        b"slow down.</p></body></html>",
        "Received an HTML page (“Too many requests, slow down.”)",
    ),
    (
        b"Service Unavailable\r\n\r\nThe server is down for maintenance.\r\n",
        "the content is not XML but text (“Service Unavailable”)",
    ),
    (  # a response saved with its headers (curl -i)
        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 60\r\n\r\nSlow down\r\n",
        "the content is not XML but text (“HTTP/1.1 429 Too Many Requests”)",
    ),
    (b"", "The feed is empty (no content at all)"),
]


@pytest.mark.parametrize(
    ("content", "quote"),
    ERROR_PAGES,
    ids=["no-title", "fragment", "not-xml-html", "script", "text", "saved-headers", "empty"],
)
def test_ingest_of_an_error_page_saved_as_a_feed_fails_quoting_it(cs_dc, tmp_path, content, quote):
    saved = tmp_path / "cs.DC.rss"
    saved.write_bytes(content)

    with pytest.raises(CommandError) as refused:
        run("ingest", "cs.DC", "--file", str(saved))

    assert str(refused.value).startswith("Ingest of cs.DC failed: ")
    assert quote in str(refused.value)
    failed = IngestRun.objects.get()
    assert (failed.status, failed.date) == (IngestRun.Status.FAILED, None)
    assert quote in failed.error and "\n" not in failed.error
    assert not Paper.objects.exists() and not Listing.objects.exists()


def test_a_long_error_page_is_quoted_in_part(cs_dc, tmp_path):
    saved = tmp_path / "cs.DC.rss"
    saved.write_bytes(b"<html><body><p>" + b"Overloaded. " * 200 + b"</p></body></html>")

    with pytest.raises(CommandError) as refused:
        run("ingest", "cs.DC", "--file", str(saved))

    assert "(“Overloaded. Overloaded." in str(refused.value)
    assert "…”)" in str(refused.value) and len(str(refused.value)) < 400


# ------------------------------------------------------------------------------------------
# backfill
# ------------------------------------------------------------------------------------------

# Submission times (UTC) and the listing day arXiv's schedule gives them (New York time).
BACKFILL = [
    ("2611.00101", "2026-11-02T15:00:00Z", "cs.DC", "2026-11-03"),  # Mon 10:00 → Tue
    ("2611.00102", "2026-11-02T18:30:00Z", "cs.LG", "2026-11-03"),  # Mon 13:30 → Tue (cross)
    ("2611.00250", "2026-11-02T20:00:00Z", "cs.DC", "2026-11-04"),  # Mon 15:00 → Wed
    ("2611.00301", "2026-11-03T16:00:00Z", "cs.DC", "2026-11-04"),  # Tue 11:00 → Wed
    ("2611.00777", "2026-11-06T17:00:00Z", "cs.DC", "2026-11-09"),  # Fri 12:00 → Mon
]


def serve_backfill(arxiv_server, *, fail_from: int | None = None) -> None:
    entries = [
        atom_entry(
            arxiv_id,
            published=published,
            primary=primary,
            # A search by category finds cross-lists too: their categories include it.
            others=() if primary == "cs.DC" else ("cs.DC",),
            title=f"Paper {arxiv_id}",
        )
        for arxiv_id, published, primary, _day in BACKFILL
    ]

    def page(request):
        start, size = int(request.param("start")), int(request.param("max_results"))
        if fail_from is not None and start >= fail_from:
            return Reply(500, b"Internal Server Error")
        return Reply(200, atom_feed(entries[start : start + size], total=len(entries), start=start))

    arxiv_server.route_function("/api/query", page)


def test_backfill_pages_through_the_api_and_dates_by_the_schedule(
    cs_dc, arxiv_server, settings, sleeps
):
    settings.ARXIV_API_DELAY_SECONDS = 3
    serve_backfill(arxiv_server)

    output = run(
        "backfill", "cs.DC", "--since", "2026-11-02", "--until", "2026-11-06", "--page-size", "2"
    )

    assert output.strip() == (
        "cs.DC: 5 papers over 3 announcement days, 5 papers created, 5 listings created."
    )
    hits = arxiv_server.hits("/api/query")
    assert [hit.param("start") for hit in hits] == ["0", "2", "4"]
    first = hits[0]
    assert first.param("search_query") == (
        "cat:cs.DC AND submittedDate:[202611020000 TO 202611062359]"
    )
    assert (first.param("sortBy"), first.param("sortOrder")) == ("submittedDate", "ascending")
    assert first.param("max_results") == "2"
    # arXiv asks for 3 s between API requests: both follow-up pages waited.
    assert len([wait for wait in sleeps if wait > 2.5]) >= 2

    listed = {
        (arxiv_id, date.isoformat(), kind)
        for arxiv_id, date, kind in Listing.objects.values_list(
            "paper__arxiv_id", "date", "announce_type"
        )
    }
    assert listed == {
        (arxiv_id, day, "new" if primary == "cs.DC" else "cross")
        for arxiv_id, _published, primary, day in BACKFILL
    }
    # Each day's run holds the instant arXiv announced it: 20:00 New York time the day before
    # (Friday's batch, listed Monday, on Sunday evening).
    announced = {
        run.date.isoformat(): run.announced_at.astimezone(NEW_YORK).strftime("%a %d %H:%M")
        for run in IngestRun.objects.all()
    }
    assert announced == {
        "2026-11-03": "Mon 02 20:00",
        "2026-11-04": "Tue 03 20:00",
        "2026-11-09": "Sun 08 20:00",
    }
    runs = IngestRun.objects.filter(status="succeeded").order_by("date")
    assert [(r.date.isoformat(), r.items) for r in runs] == [
        ("2026-11-03", 2),
        ("2026-11-04", 2),
        ("2026-11-09", 1),
    ]
    paper = Paper.objects.get(arxiv_id="2611.00101")
    assert paper.submitted_at == dt.datetime(2026, 11, 2, 15, 0, tzinfo=dt.UTC)
    assert list(PaperVersion.objects.filter(paper=paper).values_list("number", flat=True)) == [1]

    again = run("backfill", "cs.DC", "--since", "2026-11-02", "--until", "2026-11-06")
    assert "0 papers created, 0 listings created" in again
    assert Listing.objects.count() == 5


def test_backfill_failure_keeps_completed_days_and_records_the_failure(cs_dc, arxiv_server, sleeps):
    serve_backfill(arxiv_server, fail_from=4)

    with pytest.raises(CommandError, match="Backfill of cs.DC failed: Could not fetch"):
        run(
            "backfill",
            "cs.DC",
            "--since",
            "2026-11-02",
            "--until",
            "2026-11-06",
            "--page-size",
            "2",
        )

    # Days known to be complete were written; the day still open when the API failed was not.
    assert set(Listing.objects.values_list("date", flat=True)) == {dt.date(2026, 11, 3)}
    assert IngestRun.objects.filter(status="failed").count() == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cs.XX", "--since", "2026-11-01"], "Unknown category 'cs.XX'"),
        (["cs.DC", "--since", "yesterday"], "--since must be a date like"),
        (["cs.DC", "--since", "2026-11-05", "--until", "2026-11-01"], "is before --since"),
        (["cs.DC", "--since", "2026-11-01", "--page-size", "0"], "--page-size must be"),
        (["cs.DC"], "the following arguments are required: --since"),
    ],
)
def test_backfill_bad_arguments(cs_dc, arxiv_server, args, message):
    with pytest.raises(CommandError, match=message):
        run("backfill", *args)
    assert arxiv_server.requests == []
    assert not IngestRun.objects.exists()


# ------------------------------------------------------------------------------------------
# retypeset
# ------------------------------------------------------------------------------------------


def test_retypeset_renders_only_stale_papers(cs_dc):
    run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_new.xml"))
    run("ingest", "cs.DC", "--file", str(FIXTURES / "rss_authors.xml"))
    fresh = Paper.objects.get(arxiv_id="2611.18215")
    Paper.objects.exclude(pk=fresh.pk).update(
        typesetter_version=0, abstract_html="stale", title_html="stale", authors_text="stale"
    )

    output = run("retypeset", "--batch-size", "1")

    assert output.strip() == f"Re-typeset 2 papers (typesetter version {TYPESETTER_VERSION})."
    for paper in Paper.objects.all():
        assert paper.typesetter_version == TYPESETTER_VERSION
        assert "stale" not in (paper.abstract_html, paper.title_html, paper.authors_text)
    accents = Paper.objects.get(arxiv_id="2611.19033")
    assert accents.authors_text.startswith("Ana Pérez, Bo Li, Dağlı Ahmet")
    assert Paper.objects.get(pk=fresh.pk).modified_at == fresh.modified_at  # untouched

    assert run("retypeset").strip().startswith("Re-typeset 0 papers")
    assert run("retypeset", "--all").strip().startswith("Re-typeset 3 papers")
