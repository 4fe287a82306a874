"""``ingest --file`` reads the file and nothing else; enrichment through the arXiv API happens
only when asked for (``--enrich``), and a host name that does not resolve fails at once,
without retries. arXiv's addresses point at a reserved name that never resolves."""

from __future__ import annotations

import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from papers.ingest import ingest_category
from papers.models import IngestRun, Paper
from tests.papers.helpers import FIXTURES, Reply

pytestmark = pytest.mark.django_db

FEED = FIXTURES / "rss_new.xml"
NOWHERE = "http://arxiv.invalid"  # RFC 6761: never resolves


@pytest.fixture
def no_arxiv(settings, sleeps):
    settings.ARXIV_ENRICH = True  # on, as in production: a file must not use it unasked
    settings.ARXIV_RSS_URL = NOWHERE + "/rss/{category}"
    settings.ARXIV_API_URL = NOWHERE + "/api/query"
    settings.ARXIV_API_DELAY_SECONDS = 0
    return sleeps


def ingest(*args: str) -> tuple[str, float]:
    out = StringIO()
    started = time.monotonic()
    call_command("ingest", "cs.DC", *args, stdout=out, stderr=StringIO())
    return out.getvalue(), time.monotonic() - started


def test_a_file_ingest_never_asks_the_network(cs_dc, no_arxiv, monkeypatch, caplog):
    def no_lookups(*args, **kwargs):
        raise AssertionError(f"a file ingest looked up a host: {args[:2]}")

    monkeypatch.setattr("socket.getaddrinfo", no_lookups)
    output, took = ingest("--file", str(FEED))
    assert "2 items, 2 papers created" in output
    assert took < 5 and no_arxiv == []  # no waits for retries
    assert "enrichment failed" not in caplog.text
    assert Paper.objects.count() == 2


def test_asked_for_enrichment_fails_at_once_when_the_host_does_not_resolve(cs_dc, no_arxiv):
    started = time.monotonic()
    with pytest.raises(CommandError) as refused:
        ingest("--file", str(FEED), "--enrich")
    assert time.monotonic() - started < 5 and no_arxiv == []
    assert str(refused.value) == (
        "Ingest of cs.DC failed: Completing the entries through the arXiv API failed: Could not "
        f"fetch {NOWHERE}/api/query: the host name arxiv.invalid does not resolve (no network, "
        "or a wrong address in the settings). Nothing was stored; leave out --enrich to ingest "
        "the feed as it is."
    )
    assert not Paper.objects.exists()
    run = IngestRun.objects.get()
    assert run.status == IngestRun.Status.FAILED and "does not resolve" in run.error


def test_asked_for_enrichment_completes_a_file(cs_dc, arxiv_server, settings):
    settings.ARXIV_API_DELAY_SECONDS = 0
    arxiv_server.route("/api/query", Reply(200, (FIXTURES / "api_response.xml").read_bytes()))
    ingest("--file", str(FEED), "--enrich")
    assert len(arxiv_server.hits("/api/query")) == 1
    assert Paper.objects.count() == 2


def test_a_daily_fetch_with_no_network_fails_at_once_for_the_task_to_retry(cs_dc, no_arxiv):
    with pytest.raises(CommandError, match="the host name arxiv.invalid does not resolve"):
        ingest()
    assert no_arxiv == []


def test_the_daily_enrichment_without_the_api_stores_the_feed_at_once(
    cs_dc, arxiv_server, settings, sleeps, caplog
):
    settings.ARXIV_ENRICH = True  # the tests' default is off
    arxiv_server.route("/rss/cs.DC", Reply(200, FEED.read_bytes()))
    settings.ARXIV_API_URL = NOWHERE + "/api/query"
    run = ingest_category(category=cs_dc)
    assert run.status == IngestRun.Status.SUCCEEDED and run.papers_created == 2
    assert sleeps == []
    assert "enrichment failed" in caplog.text and "does not resolve" in caplog.text
