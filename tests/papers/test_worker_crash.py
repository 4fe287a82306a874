"""A Celery worker killed in the middle of an ingest: the task runs again on another worker once
the broker's visibility timeout has passed, and the result equals one clean run. Real worker
processes on the Redis broker; the timeout is shortened to seconds for the test, and a second
test checks that the real one outlasts any task a healthy worker is still holding."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.db import connection

from papers import ingest
from papers.models import IngestRun, Listing, Paper, PaperVersion
from peerrevenue.celery import app
from tests.papers.helpers import Reply, fixture_bytes

# Starts real Celery worker processes: `make test-fast` leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
BROKER = "redis://127.0.0.1:6379/15"


def snapshot() -> dict[str, set]:
    return {
        "papers": set(Paper.objects.values_list("arxiv_id", "version", "title", "abstract_html")),
        "versions": set(PaperVersion.objects.values_list("paper__arxiv_id", "number")),
        "listings": set(
            Listing.objects.values_list(
                "category__code", "paper__arxiv_id", "date", "announce_type"
            )
        ),
    }


def worker_env(arxiv_server) -> dict[str, str]:
    db = connection.settings_dict
    return os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": BROKER,
        "ARXIV_RSS_URL": arxiv_server.url + "/rss/{category}",
        "ARXIV_ENRICH": "0",
        "ARXIV_HTTP_RETRIES": "0",
    }


def start_worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "peerrevenue",
            "worker",
            "--pool",
            "solo",
            "--queues",
            "ingest,celery",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "--loglevel",
            "WARNING",
        ],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def wait_until(condition, *, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.2)
    raise AssertionError(message)


def test_killed_worker_mid_ingest_is_redelivered_and_matches_a_clean_run(cs_dc, arxiv_server):
    feed = fixture_bytes("rss_new.xml")
    first_request_seen: list[object] = []

    def reply(request) -> Reply:
        if not first_request_seen:
            first_request_seen.append(request)
            time.sleep(8)  # the first worker dies while it waits for this download
        return Reply(200, feed)

    arxiv_server.route_function("/rss/cs.DC", reply)
    env = worker_env(arxiv_server) | {
        "CELERY_VISIBILITY_TIMEOUT": "3",
        # Sweep for abandoned messages every second instead of every hundred.
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
    }
    with app.connection_for_write(BROKER) as broker:
        redis.Redis.from_url(BROKER).flushdb()
        app.conf.task_always_eager = False
        from papers.tasks import ingest_category

        # Celery takes the connection to send on among apply_async's options; celery-types
        # lists no such option.
        ingest_category.apply_async(args=(cs_dc.pk,), connection=broker)  # type: ignore[call-arg]

    first = start_worker(env)
    try:
        wait_until(lambda: first_request_seen, timeout=120, message="no worker took the task")
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        assert not Paper.objects.exists()  # it died before writing anything

        second = start_worker(env)
        try:
            wait_until(
                lambda: IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED).exists(),
                timeout=90,
                message="the task was not run again after its worker died",
            )
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)

    recovered = snapshot()
    statuses = sorted(IngestRun.objects.values_list("status", flat=True))
    # The dead worker's run is closed as interrupted by the worker that took over.
    assert statuses == ["failed", "succeeded"]
    assert "Interrupted" in IngestRun.objects.get(status="failed").error

    Paper.objects.all().delete()
    ingest.ingest_category(category=cs_dc, file=Path(__file__).parent / "fixtures/rss_new.xml")
    assert recovered == snapshot()
    assert len(recovered["papers"]) == 2


def longest_retry_countdown(task) -> int:
    """The longest a retry of `task` waits before it runs again, in seconds."""
    if not getattr(task, "autoretry_for", ()) or not task.max_retries:
        return 0
    if not task.retry_backoff:
        return task.default_retry_delay
    factor = max(1, int(task.retry_backoff))
    maximum = getattr(task, "retry_backoff_max", 600)
    # Celery waits factor · 2^(retries so far), capped; the last retry has max_retries - 1.
    return min(maximum, factor * 2 ** (task.max_retries - 1))


def test_the_visibility_timeout_outlasts_every_task_a_healthy_worker_holds():
    """A shorter timeout would hand a task still waiting for its retry, or still running, to a
    second worker while the first holds it (and a chord would count it twice)."""
    app.loader.import_default_modules()
    ours = [task for name, task in app.tasks.items() if not name.startswith("celery.")]
    assert {task.name for task in ours} >= {
        "papers.tasks.ingest_category",
        "market.tasks.pay_dividends",
        "accounts.daily.send_digests_after_ingest",
    }
    longest_wait = max(longest_retry_countdown(task) for task in ours)
    assert longest_wait == settings.LONGEST_TASK_RETRY_COUNTDOWN == 16 * 60

    hard_limit = settings.CELERY_TASK_TIME_LIMIT
    assert hard_limit > settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert all(task.time_limit in (None, hard_limit) for task in ours)
    timeout = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert longest_wait + hard_limit < timeout <= 60 * 60
    # A crash during the 21:30 ingest is recovered before the 23:30 run starts.
    assert timeout + 100 < 2 * 60 * 60


def test_the_daily_chord_on_a_real_worker_mails_digests_even_if_one_category_fails(
    cs_dc, arxiv_server, reader
):
    """Eager tasks never go through the chord's result backend or its error path; a worker
    does. cs.NI's feed is gone for good, so the chord's body is never called and its errback
    (the same digest step) sends what is in."""
    from accounts.daily import run_daily
    from accounts.models import DigestDelivery, Preferences
    from papers.models import Category

    # Made here: the first test's flush took the data migration's categories away.
    Category.objects.update_or_create(
        code="cs.NI",
        defaults={
            "name": "Networking and Internet Architecture",
            "archive_code": "cs",
            "archive_name": "Computer Science",
            "ingest_enabled": True,
        },
    )
    cs_dc.toggle_watch(reader)
    Preferences.objects.create(user=reader, daily_digest=True)
    arxiv_server.route("/rss/cs.DC", Reply(200, fixture_bytes("rss_new.xml")))
    arxiv_server.route("/rss/cs.NI", Reply(404, b"Not Found"))

    with app.connection_for_write(BROKER) as broker:
        redis.Redis.from_url(BROKER).flushdb()
        app.conf.task_always_eager = False
        run_daily.apply_async(kwargs={"last_attempt": True}, connection=broker)  # type: ignore[call-arg]

    worker = start_worker(worker_env(arxiv_server))
    try:
        wait_until(
            lambda: (
                DigestDelivery.objects.exists()
                and IngestRun.objects.filter(status=IngestRun.Status.FAILED).exists()
            ),
            timeout=120,
            message="no digest was sent after the chord failed",
        )
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)

    [delivery] = DigestDelivery.objects.all()
    assert (delivery.user, str(delivery.date), delivery.paper_count) == (reader, "2026-11-24", 2)
    statuses = dict(IngestRun.objects.values_list("category__code", "status"))
    assert statuses == {"cs.DC": "succeeded", "cs.NI": "failed"}
