"""arXiv misbehaving, end to end: each fault ends in a failed run that wrote nothing (or a clean
success after retries), and the next run catches up. A local server stands in for arXiv."""

from __future__ import annotations

import time

import pytest

from papers import ingest
from papers.models import IngestRun, Listing, Paper
from tests.papers.helpers import Reply, fixture_bytes

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
