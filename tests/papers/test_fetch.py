"""Fetching from arXiv: retries with bounded exponential backoff, Retry-After, the API glitch."""

from __future__ import annotations

import datetime as dt
import email.utils

import pytest
from django.utils import timezone

from papers.arxiv.client import fetch, fetch_api
from papers.arxiv.errors import FetchError, IngestError
from tests.papers.helpers import Reply, atom_entry, atom_feed, fixture_bytes


def test_a_successful_fetch_sends_our_user_agent(arxiv_server, settings, sleeps):
    arxiv_server.route("/rss/cs.DC", Reply(200, b"<rss/>"))

    assert fetch(f"{arxiv_server.url}/rss/cs.DC") == b"<rss/>"
    (request,) = arxiv_server.requests
    assert request.headers["User-Agent"] == settings.INGEST_USER_AGENT
    assert sleeps == []


def test_5xx_is_retried_with_exponential_backoff(arxiv_server, sleeps):
    arxiv_server.route(
        "/feed", Reply(503, b"busy"), Reply(502, b"bad gateway"), Reply(500), Reply(200, b"ok")
    )

    assert fetch(f"{arxiv_server.url}/feed", retries=3, backoff=1.0, max_delay=60) == b"ok"
    assert len(arxiv_server.requests) == 4
    assert sleeps == [1.0, 2.0, 4.0]


def test_backoff_is_capped(arxiv_server, sleeps):
    arxiv_server.route("/feed", Reply(500))

    with pytest.raises(FetchError, match=r"after 5 attempts: HTTP 500"):
        fetch(f"{arxiv_server.url}/feed", retries=4, backoff=1.0, max_delay=3.0)
    assert sleeps == [1.0, 2.0, 3.0, 3.0]
    assert len(arxiv_server.requests) == 5


def test_429_honours_retry_after_seconds(arxiv_server, sleeps):
    arxiv_server.route(
        "/api", Reply(429, b"slow down", {"Retry-After": "7"}), Reply(200, b"<feed/>")
    )

    assert fetch(f"{arxiv_server.url}/api", retries=2, backoff=0.5, max_delay=30) == b"<feed/>"
    assert sleeps == [7.0]


def test_retry_after_is_capped_and_accepts_an_http_date(arxiv_server, sleeps):
    later = email.utils.format_datetime(timezone.now() + dt.timedelta(hours=2), usegmt=True)
    arxiv_server.route(
        "/api",
        Reply(429, b"", {"Retry-After": "86400"}),
        Reply(503, b"", {"Retry-After": later}),
        Reply(200, b"done"),
    )

    assert fetch(f"{arxiv_server.url}/api", retries=2, backoff=0.5, max_delay=10) == b"done"
    assert sleeps == [10.0, 10.0]


def test_client_errors_are_not_retried(arxiv_server, sleeps):
    arxiv_server.route("/rss/cs.XX", Reply(404, b"no such feed"))

    with pytest.raises(IngestError, match="HTTP 404") as caught:
        fetch(f"{arxiv_server.url}/rss/cs.XX", retries=3)
    assert not isinstance(caught.value, FetchError)  # not worth a later retry either
    assert len(arxiv_server.requests) == 1 and sleeps == []


def test_connection_errors_are_retried_then_reported(sleeps):
    # Port 9 (discard) is closed on the test machine: the connection is refused at once.
    with pytest.raises(FetchError, match=r"Could not fetch http://127.0.0.1:9/x after 3 attempts"):
        fetch("http://127.0.0.1:9/x", retries=2, backoff=0.25, max_delay=10)
    assert sleeps == [0.25, 0.5]


def test_timeouts_are_retried(arxiv_server, settings, sleeps):
    import time

    settings.ARXIV_HTTP_TIMEOUT_SECONDS = 0.2
    calls = []

    def slow_then_fast(request):
        calls.append(request)
        if len(calls) == 1:
            time.sleep(0.6)
        return Reply(200, b"fast")

    arxiv_server.route_function("/slow", slow_then_fast)
    assert fetch(f"{arxiv_server.url}/slow", retries=1, backoff=0.01) == b"fast"
    assert len(calls) == 2 and len(sleeps) == 1


def test_api_empty_page_is_retried(arxiv_server, sleeps):
    good = atom_feed([atom_entry("2611.00001", published="2026-11-02T10:00:00Z")], total=1, start=0)
    arxiv_server.route(
        "/api/query", Reply(200, fixture_bytes("api_empty_page.xml")), Reply(200, good)
    )

    page = fetch_api({"search_query": "cat:cs.DC", "start": "0"})

    assert [entry.arxiv_id for entry in page.entries] == ["2611.00001"]
    assert len(arxiv_server.hits("/api/query")) == 2
    assert len(sleeps) == 1


def test_api_empty_pages_give_up_after_the_retries(arxiv_server, sleeps):
    arxiv_server.route("/api/query", Reply(200, fixture_bytes("api_empty_page.xml")))

    with pytest.raises(FetchError, match="kept returning empty pages"):
        fetch_api({"search_query": "cat:cs.DC", "start": "100"})
    assert len(arxiv_server.hits("/api/query")) == 3  # ARXIV_HTTP_RETRIES = 2 in the tests


def test_api_requests_are_spaced_by_the_politeness_delay(arxiv_server, settings, sleeps):
    settings.ARXIV_API_DELAY_SECONDS = 3
    arxiv_server.route("/api/query", Reply(200, atom_feed([], total=0)))

    for _ in range(3):
        fetch_api({"id_list": "2611.00001"})

    # The first request may go at once (unless another test just made one); each later one
    # waits for most of the 3 seconds.
    assert len(sleeps) >= 2
    assert all(2.5 < wait <= 3 for wait in sleeps[-2:])
