"""The Celery tasks: daily fan-out, retries on network trouble, one ingest per category."""

from __future__ import annotations

import datetime as dt

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from papers import ingest, tasks
from papers.models import Category, IngestRun, Lease, Listing, Paper
from tests.papers.helpers import Reply, fixture_bytes

pytestmark = pytest.mark.django_db


def test_task_ingests_the_feed(cs_dc, arxiv_server, eager_celery):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))

    result = tasks.ingest_category.delay(cs_dc.pk)

    run = IngestRun.objects.get(pk=result.get())
    assert run.status == IngestRun.Status.SUCCEEDED
    assert (run.papers_created, run.listings_created) == (2, 2)
    assert Listing.objects.filter(category=cs_dc).count() == 2


def test_task_is_configured_to_retry_network_errors_only():
    """And a minute apart at most: the worker holds a waiting retry unacknowledged, and the
    broker's visibility timeout (five minutes' recovery after a crash) must outlast it."""
    task = tasks.ingest_category
    assert task.acks_late is True
    # Set from the decorator's options; celery-types does not declare these on Task.
    assert task.autoretry_for == (ingest.FetchError, SoftTimeLimitExceeded)  # type: ignore[attr-defined]
    assert task.max_retries == 20
    assert task.retry_backoff and task.retry_backoff_max == 60  # type: ignore[attr-defined]


@pytest.fixture
def eager_retries(eager_celery):
    """In eager mode Celery replays a retry in process only when errors do not propagate."""
    eager_celery.conf.task_eager_propagates = False
    return eager_celery


def test_task_retries_a_503_until_the_feed_comes_back(
    cs_dc, arxiv_server, settings, sleeps, eager_retries
):
    # One attempt per task run, so the retrying we see is Celery's, not fetch's.
    settings.ARXIV_HTTP_RETRIES = 0
    arxiv_server.route(
        "/rss/cs.DC",
        Reply(503, b"<html><title>503 Service Unavailable</title></html>"),
        Reply(503, b"", {"Retry-After": "1"}),
        Reply(200, fixture_bytes("rss_new.xml")),
    )

    result = tasks.ingest_category.apply(args=(cs_dc.pk,))

    assert result.successful(), result.traceback
    assert len(arxiv_server.hits("/rss/cs.DC")) == 3
    runs = list(IngestRun.objects.order_by("started_at", "pk").values_list("status", flat=True))
    assert runs == ["failed", "failed", "succeeded"]  # every attempt is on record
    assert "HTTP 503" in IngestRun.objects.filter(status="failed").earliest("pk").error
    assert Paper.objects.count() == 2


def test_task_retries_an_html_page_served_as_200(cs_dc, arxiv_server, settings, eager_retries):
    arxiv_server.route(
        "/rss/cs.DC",
        Reply(200, fixture_bytes("error_503.html"), {"Content-Type": "text/html"}),
        Reply(200, fixture_bytes("rss_new.xml")),
    )

    result = tasks.ingest_category.apply(args=(cs_dc.pk,))

    assert result.successful(), result.traceback
    failed, succeeded = IngestRun.objects.order_by("started_at", "pk")
    assert "HTML page" in failed.error and succeeded.papers_created == 2


def test_task_gives_up_after_max_retries(
    cs_dc, arxiv_server, settings, sleeps, monkeypatch, eager_retries
):
    settings.ARXIV_HTTP_RETRIES = 0
    monkeypatch.setattr(tasks.ingest_category, "max_retries", 2)
    arxiv_server.route("/rss/cs.DC", Reply(503, b"down"))

    result = tasks.ingest_category.apply(args=(cs_dc.pk,))

    assert result.failed()
    assert isinstance(result.result, ingest.FetchError) and "HTTP 503" in str(result.result)
    assert len(arxiv_server.hits("/rss/cs.DC")) == 3  # the first try and two retries
    assert IngestRun.objects.filter(status="failed").count() == 3
    assert not Paper.objects.exists()


def test_malformed_feeds_are_not_retried(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("truncated.xml")))

    with pytest.raises(ingest.IngestError, match="truncated"):
        tasks.ingest_category.apply(args=(cs_dc.pk,), throw=True)

    assert len(arxiv_server.hits("/rss/cs.DC")) == 1
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED


def test_arxivs_error_feed_is_not_retried_and_leaves_the_day_to_do(cs_dc, arxiv_server):
    from accounts.daily import missing_categories

    Category.objects.exclude(pk=cs_dc.pk).update(ingest_enabled=False)
    queued = timezone.now()
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_error.xml")))

    with pytest.raises(ingest.IngestError, match="arXiv answered with an error feed") as failed:
        tasks.ingest_category.apply(args=(cs_dc.pk,), throw=True)

    assert not isinstance(failed.value, ingest.FetchError)  # a bad archive stays bad
    assert "Bad archive 'compsci'" in str(failed.value)
    assert len(arxiv_server.hits("/rss/cs.DC")) == 1
    assert IngestRun.objects.get().status == IngestRun.Status.FAILED
    # Neither the task's "already done" check nor the digests take the day as ingested.
    assert IngestRun.objects.feed_ingested_since(category=cs_dc, since=queued) is None
    assert missing_categories(dt.date(2026, 11, 28)) == ["cs.DC"]

    # The empty day's feed, which differs only in its title and description, is a day done.
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_empty.xml")))
    tasks.ingest_category.apply(args=(cs_dc.pk,), throw=True)
    assert IngestRun.objects.feed_ingested_since(category=cs_dc, since=queued) is not None
    assert missing_categories(dt.date(2026, 11, 28)) == []


def test_task_retries_a_proxys_text_answer_served_as_200(cs_dc, arxiv_server, eager_retries):
    arxiv_server.route(
        "/rss/cs.DC",
        Reply(200, b"upstream connect error or disconnect/reset before headers\n"),
        Reply(200, fixture_bytes("rss_new.xml")),
    )

    result = tasks.ingest_category.apply(args=(cs_dc.pk,))

    assert result.successful(), result.traceback
    failed, succeeded = IngestRun.objects.order_by("started_at", "pk")
    assert "(“upstream connect error or disconnect/reset before headers”)" in failed.error
    assert succeeded.papers_created == 2


def held_elsewhere(category: Category, *, seconds: float = 60) -> Lease:
    """Another worker's lease on the category's ingest."""
    return Lease.objects.create(
        name=ingest.ingest_lease_name(category.pk),
        owner="another-host:123:abcdef",
        taken_at=timezone.now(),
        expires_at=timezone.now() + dt.timedelta(seconds=seconds),
    )


def test_one_ingest_at_a_time_per_category(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    cs_lg = Category.objects.get(code="cs.LG")

    other = held_elsewhere(cs_dc)
    assert tasks.ingest_category.apply(args=(cs_dc.pk,)).get() is None
    assert arxiv_server.requests == [] and not IngestRun.objects.exists()
    # Other categories are not blocked by it.
    with ingest.ingest_lock(cs_lg.pk) as acquired:
        assert acquired
    other.delete()

    assert tasks.ingest_category.apply(args=(cs_dc.pk,)).get() is not None
    assert IngestRun.objects.get().status == IngestRun.Status.SUCCEEDED


def test_a_dead_workers_lease_expires_and_the_next_run_ingests(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    held_elsewhere(cs_dc, seconds=-1)  # its holder stopped renewing it a second ago

    assert tasks.ingest_category.apply(args=(cs_dc.pk,)).get() is not None
    assert IngestRun.objects.get().status == IngestRun.Status.SUCCEEDED
    assert not Lease.objects.exists()  # released by its new owner


def test_the_lease_is_released_after_a_failure(cs_dc, arxiv_server):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("malformed.xml")))
    with pytest.raises(ingest.IngestError):
        tasks.ingest_category.apply(args=(cs_dc.pk,), throw=True)

    assert not Lease.objects.exists()
    with ingest.ingest_lock(cs_dc.pk) as acquired:
        assert acquired


def test_a_feed_ingested_since_the_task_was_queued_is_not_ingested_again(cs_dc, arxiv_server):
    """A duplicate of the day's message (a second beat, a redelivery) finds the first one's
    run and returns it."""
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    queued = timezone.now().isoformat()
    first = tasks.ingest_category.apply(args=(cs_dc.pk,), kwargs={"queued_at": queued}).get()
    again = tasks.ingest_category.apply(args=(cs_dc.pk,), kwargs={"queued_at": queued}).get()

    assert again == first
    assert len(arxiv_server.hits("/rss/cs.DC")) == 1
    # Queued after that run (the 23:30 attempt), it fetches the feed again, and finds its day
    # stored: the day keeps its one run.
    later = tasks.ingest_category.apply(args=(cs_dc.pk,)).get()
    assert len(arxiv_server.hits("/rss/cs.DC")) == 2
    assert later == first and IngestRun.objects.count() == 1


def test_enabled_categories_each_get_a_task(cs_dc, monkeypatch):
    Category.objects.filter(code="cs.NI").update(ingest_enabled=True)
    queued: list[int] = []
    monkeypatch.setattr(tasks.ingest_category, "delay", queued.append)

    result = tasks.ingest_enabled_categories.apply().get()

    expected = [cs_dc.pk, Category.objects.get(code="cs.NI").pk]
    assert queued == expected and result == expected


def test_daily_fan_out_runs_eagerly_end_to_end(cs_dc, arxiv_server, eager_celery):
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_cross.xml")))

    tasks.ingest_enabled_categories.delay()

    assert Listing.objects.get(category=cs_dc).announce_type == "cross"
