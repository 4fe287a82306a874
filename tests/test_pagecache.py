"""Anonymous pages come from the cache until what they show changes."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db(transaction=True)

FRIDAY = dt.date(2026, 10, 2)


def queries_for(client, url: str) -> tuple[int, str]:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    assert response.status_code == 200
    return len(queries), response.content.decode()


def test_second_anonymous_view_runs_no_queries(client, cs_dc):
    list_paper(make_paper(title="Cached gossip"), category=cs_dc, date=FRIDAY)
    first, body = queries_for(client, "/list/cs.DC/")
    second, cached = queries_for(client, "/list/cs.DC/")
    assert first > 0
    assert second == 0
    assert cached == body


def test_new_listing_shows_at_once(client, cs_dc):
    list_paper(make_paper(title="First paper"), category=cs_dc, date=FRIDAY)
    client.get("/list/cs.DC/")
    list_paper(make_paper(title="Second paper"), category=cs_dc, date=FRIDAY)
    assert "Second paper" in client.get("/list/cs.DC/").content.decode()


def test_hiding_in_the_admin_removes_the_paper_at_once(client, cs_dc, curator):
    paper = make_paper(title="Embarrassing paper")
    list_paper(paper, category=cs_dc, date=FRIDAY)
    assert "Embarrassing paper" in client.get("/list/cs.DC/").content.decode()

    from django.test import Client

    admin = Client()
    admin.force_login(curator)
    admin.post(
        "/admin/papers/paper/",
        {"action": "hide", "_selected_action": [paper.pk]},
    )
    paper.refresh_from_db()
    assert paper.hidden
    assert "Embarrassing paper" not in client.get("/list/cs.DC/").content.decode()


def test_signed_in_readers_never_get_the_anonymous_page(client, cs_dc, reader):
    client.get("/list/cs.DC/")
    client.force_login(reader)
    body = client.get("/list/cs.DC/").content.decode()
    assert "rosalind" in body
    assert "csrfmiddlewaretoken" in body
    client.logout()
    anonymous = client.get("/list/cs.DC/").content.decode()
    assert "rosalind" not in anonymous
    assert "csrfmiddlewaretoken" not in anonymous


def test_watching_updates_the_count_for_everyone(client, cs_dc, reader):
    from django.test import Client

    assert "0 watchers" in client.get("/list/cs.DC/").content.decode()
    watcher = Client()
    watcher.force_login(reader)
    watcher.post("/list/cs.DC/watch/")
    assert "1 watcher" in client.get("/list/cs.DC/").content.decode()


def test_cached_pages_keep_the_security_headers_and_vary_on_cookie(client, cs_dc):
    client.get("/list/cs.DC/")
    hit = client.get("/list/cs.DC/")
    assert "script-src 'self'" in hit["Content-Security-Policy"]
    assert hit["X-Frame-Options"] == "DENY"
    assert "Cookie" in hit["Vary"]


def test_another_process_sees_an_invalidation_within_the_recheck_delay(client, cs_dc, monkeypatch):
    from django.core.cache import cache

    from peerrevenue import pagecache

    list_paper(make_paper(title="Before"), category=cs_dc, date=FRIDAY)
    client.get("/list/cs.DC/")
    # Another process (the Celery worker, say) replaces the generation behind our back.
    cache.set(pagecache.GENERATION_KEY, "changed elsewhere", timeout=None)
    now = pagecache.time.monotonic()
    monkeypatch.setattr(
        pagecache.time, "monotonic", lambda: now + pagecache.GENERATION_RECHECK_SECONDS + 0.1
    )
    assert pagecache.pages_generation() == "changed elsewhere"


def test_ones_own_watch_shows_at_once_on_a_worker_that_read_the_generation_before_it(
    client, cs_dc, reader
):
    from peerrevenue import pagecache

    client.force_login(reader)
    list_paper(make_paper(title="Watched gossip"), category=cs_dc, date=FRIDAY)
    assert "0 watchers" in client.get("/list/cs.DC/").content.decode()
    other_worker_saw = pagecache._generation_seen  # read moments before the watch
    response = client.post("/list/cs.DC/watch/")
    assert response.cookies[pagecache.CHANGED_COOKIE]["max-age"] == 5
    # The redirect lands on another worker, which has not re-read the generation yet.
    pagecache._generation_seen = other_worker_saw
    page = client.get("/list/cs.DC/").content.decode()
    assert "1 watcher" in page and "Unwatch" in page
