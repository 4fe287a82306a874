"""Fixtures for the ingest tests: a local arXiv stand-in, fast retries, no network."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.papers.helpers import FakeArxiv


@pytest.fixture(autouse=True)
def offline_arxiv(settings):
    """No test may reach arXiv: endpoints point at a closed local port unless a test serves
    them, and retries and the API's politeness delay are made instant."""
    settings.ARXIV_RSS_URL = "http://127.0.0.1:9/rss/{category}"
    settings.ARXIV_API_URL = "http://127.0.0.1:9/api/query"
    settings.ARXIV_API_DELAY_SECONDS = 0
    settings.ARXIV_HTTP_TIMEOUT_SECONDS = 5
    settings.ARXIV_HTTP_RETRIES = 2
    settings.ARXIV_HTTP_BACKOFF_SECONDS = 0.001
    settings.ARXIV_HTTP_MAX_DELAY_SECONDS = 0.05
    settings.ARXIV_ENRICH = False
    return settings


@pytest.fixture
def arxiv_server(settings) -> Iterator[FakeArxiv]:
    """A stand-in for rss.arxiv.org and export.arxiv.org on 127.0.0.1, wired into settings."""
    server = FakeArxiv()
    settings.ARXIV_RSS_URL = server.url + "/rss/{category}"
    settings.ARXIV_API_URL = server.url + "/api/query"
    yield server
    server.close()


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """Record the ingest's back-off waits instead of sleeping."""
    from papers.arxiv import client

    recorded: list[float] = []
    monkeypatch.setattr(client, "_sleep", recorded.append)
    return recorded


@pytest.fixture
def eager_celery():
    """Run tasks in process even when the suite has a Redis broker (CI sets REDIS_URL)."""
    from peerrevenue.celery import app

    before = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = True
    app.conf.task_eager_propagates = True
    yield app
    app.conf.task_always_eager, app.conf.task_eager_propagates = before
