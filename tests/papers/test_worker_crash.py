"""A Celery worker killed in the middle of an ingest: the task runs again on another worker once
the broker's visibility timeout has passed, and the result equals one clean run. Real worker
processes on the Redis broker; the timeout is shortened to seconds for the test, and a second
test checks that the real one outlasts any task a healthy worker is still holding."""

from __future__ import annotations

import datetime as dt
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from papers import ingest
from papers.models import IngestRun, Listing, Paper, PaperVersion
from peerrevenue.celery import app
from tests.papers.helpers import Reply, fixture_bytes
from tests.processes import PrivateRedis

# Starts real Celery worker processes: `make test-fast` leaves it out.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def broker() -> Iterator[str]:
    """A Redis of the tests' own: the broker they flush and the workers they start share it
    with nobody."""
    server = PrivateRedis()
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


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


def worker_env(arxiv_server, broker: str) -> dict[str, str]:
    db = connection.settings_dict
    return os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": broker,
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


def test_killed_worker_mid_ingest_is_redelivered_and_matches_a_clean_run(
    cs_dc, arxiv_server, broker
):
    feed = fixture_bytes("rss_new.xml")
    first_request_seen: list[object] = []

    def reply(request) -> Reply:
        if not first_request_seen:
            first_request_seen.append(request)
            time.sleep(8)  # the first worker dies while it waits for this download
        return Reply(200, feed)

    arxiv_server.route_function("/rss/cs.DC", reply)
    env = worker_env(arxiv_server, broker) | {
        # Longer than the wait for the lease below (a retry held unacknowledged meanwhile).
        "CELERY_VISIBILITY_TIMEOUT": "8",
        # The dead worker's lease on cs.DC may outlive the redelivery: the task waits for it.
        "INGEST_LEASE_SECONDS": "6",
        # Sweep for abandoned messages every second instead of every hundred.
        "CELERY_UNACKED_RESTORE_INTERVAL": "1",
        "CELERY_UNACKED_RESTORE_THROTTLE": "1",
    }
    with app.connection_for_write(broker) as sending:
        redis.Redis.from_url(broker).flushdb()
        app.conf.task_always_eager = False
        from papers.tasks import ingest_category

        # Celery takes the connection to send on among apply_async's options; celery-types
        # lists no such option.
        ingest_category.apply_async(args=(cs_dc.pk,), connection=sending)  # type: ignore[call-arg]

    first = start_worker(env)
    try:
        wait_until(lambda: first_request_seen, timeout=120, message="no worker took the task")
        os.killpg(first.pid, signal.SIGKILL)
        killed = time.monotonic()
        first.wait(timeout=10)
        assert not Paper.objects.exists()  # it died before writing anything

        second = start_worker(env)
        try:
            wait_until(
                lambda: IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED).exists(),
                timeout=90,
                message="the task was not run again after its worker died",
            )
            print(f"\nIngested {time.monotonic() - killed:.1f} s after its worker was killed")
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
    if not getattr(task, "retry_backoff", False):
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
    assert longest_wait == settings.LONGEST_TASK_RETRY_COUNTDOWN == 60

    hard_limit = settings.CELERY_TASK_TIME_LIMIT
    assert hard_limit > settings.CELERY_TASK_SOFT_TIME_LIMIT
    assert all(task.time_limit in (None, hard_limit) for task in ours)
    options = settings.CELERY_BROKER_TRANSPORT_OPTIONS
    timeout = options["visibility_timeout"]
    assert longest_wait + hard_limit < timeout
    # A task whose worker died is handed out again within five minutes: the timeout, plus at
    # most one sweep period of the surviving workers.
    sweep = options["unacked_restore_interval"] * options["unacked_restore_throttle"]
    assert timeout + sweep <= 5 * 60
    # A dead worker's ingest lease is gone long before its task comes back.
    assert timeout > settings.INGEST_LEASE_SECONDS


def test_the_daily_chord_on_a_real_worker_mails_digests_even_if_one_category_fails(
    cs_dc, arxiv_server, reader, broker
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

    with app.connection_for_write(broker) as sending:
        redis.Redis.from_url(broker).flushdb()
        app.conf.task_always_eager = False
        run_daily.apply_async(kwargs={"last_attempt": True}, connection=sending)  # type: ignore[call-arg]

    worker = start_worker(worker_env(arxiv_server, broker))
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


def test_duplicate_messages_on_two_workers_ingest_and_pay_once(cs_dc, arxiv_server, broker):
    """What redelivery and a second beat produce: every message of the day twice, on two
    workers at once. The feed is ingested once, each holder paid once, the books balance."""
    from market import trading
    from market.ledger import check_ledger
    from market.models import DividendEvent, Term
    from market.tasks import pay_dividends
    from papers.tasks import ingest_category
    from tests.market.state import held_before_the_announcement

    trader = get_user_model().objects.create_user("tobias", "tobias@example.org", "x")
    term = Term.objects.create(phrase="linearizable reads", p0=1_000, k=10)
    trading.buy(user=trader, term=term, shares=4, max_cost=None, key="before")
    day = dt.date(2026, 11, 24)  # the fixture feed's announcement day
    held_before_the_announcement(day)
    before = trading.balance(trader)

    def slow_feed(request) -> Reply:
        time.sleep(1)  # both workers are inside the task at once
        return Reply(200, fixture_bytes("rss_new.xml"))

    arxiv_server.route_function("/rss/cs.DC", slow_feed)
    queued_at = timezone.now().isoformat()
    with app.connection_for_write(broker) as sending:
        redis.Redis.from_url(broker).flushdb()
        app.conf.task_always_eager = False
        for _ in range(2):
            ingest_category.apply_async(  # type: ignore[call-arg]
                args=(cs_dc.pk,), kwargs={"queued_at": queued_at}, connection=sending
            )
    workers = [start_worker(worker_env(arxiv_server, broker)) for _ in range(2)]
    try:
        wait_until(
            lambda: (
                IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED).exists()
                and not redis.Redis.from_url(broker).llen("ingest")
                and not redis.Redis.from_url(broker).hlen("unacked")
            ),
            timeout=120,
            message="the ingest did not finish",
        )
        with app.connection_for_write(broker) as sending:
            for _ in range(2):  # the day's dividends, redelivered
                pay_dividends.apply_async(  # type: ignore[call-arg]
                    args=(cs_dc.pk, day.isoformat()), connection=sending
                )
        wait_until(
            lambda: (
                not redis.Redis.from_url(broker).llen("celery")
                and not redis.Redis.from_url(broker).hlen("unacked")
            ),
            timeout=60,
            message="the dividend tasks did not run",
        )
    finally:
        for worker in workers:
            os.killpg(worker.pid, signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=30)

    assert IngestRun.objects.filter(status=IngestRun.Status.SUCCEEDED).count() == 1
    assert len(arxiv_server.hits("/rss/cs.DC")) == 1
    assert Listing.objects.filter(category=cs_dc).count() == 2
    paid = DividendEvent.objects.filter(term=term)
    assert paid.count() == 1
    assert trading.balance(trader) == before + 4 * settings.MARKET_DIVIDEND_PER_MENTION
    assert check_ledger().ok
