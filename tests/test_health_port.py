"""``/healthz`` on its own port (peerrevenue.health_port) against real gunicorn: with every sync
worker busy on slow pages, the balancer's check is still answered within 100 ms, while the same
check on the site's port waits behind the pages; nothing but the health path is served there;
and the answer is what the workers reported lately, 503 once none has."""

from __future__ import annotations

import datetime as dt
import json
import statistics
import threading
import time

import pytest
import requests
from django.db import connection

from peerrevenue import health_port
from tests.factories import list_paper, make_paper
from tests.processes import (
    HttpsClient,
    PrivateRedis,
    collect_static,
    database_url,
    free_port,
    production_environment,
    serving,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

WORKERS = 2
SLOW_PAGES = 2 * WORKERS  # every worker busy, and as many queued behind them
LIMIT_SECONDS = 0.1


@pytest.fixture
def site(cs_dc, tmp_path):
    collect_static()
    list_paper(make_paper(title="Quorum systems"), category=cs_dc, date=dt.date(2026, 11, 24))
    cache = PrivateRedis()
    cache.start()
    health_port = free_port()
    env = production_environment(
        database_url=database_url(), REDIS_URL=cache.url, HEALTH_PORT=str(health_port)
    )
    output = tmp_path / "gunicorn.log"
    try:
        with serving(env=env, ready="/healthz", output=output, workers=WORKERS) as base:
            yield {"base": base, "health": f"http://127.0.0.1:{health_port}", "output": output}
    finally:
        cache.stop()


def held_pages(base: str, *, count: int, answers: list[int | str]) -> list[threading.Thread]:
    """``count`` readers of the category's page, each left waiting by the lock the test holds."""

    def read() -> None:
        try:
            answers.append(HttpsClient(base, timeout=60).get("/list/cs.DC/").status_code)
        except requests.RequestException as exc:
            answers.append(type(exc).__name__)

    threads = [threading.Thread(target=read) for _ in range(count)]
    for thread in threads:
        thread.start()
    return threads


def timed(url: str, *, timeout: float) -> tuple[float, int | str]:
    started = time.monotonic()
    try:
        status: int | str = requests.get(url, timeout=timeout).status_code
    except requests.RequestException as exc:
        status = type(exc).__name__
    return time.monotonic() - started, status


def test_health_answers_within_100_ms_while_every_worker_is_busy(site):
    # Each worker has served a page and a check: its connections are open, its code imported.
    for _ in range(4 * WORKERS):
        assert HttpsClient(site["base"]).get("/list/cs.DC/").status_code == 200
        assert requests.get(site["health"] + "/healthz", timeout=10).status_code == 200
    answers: list[int | str] = []
    with connection.cursor() as cursor:
        # The category page reads its category (even a kept page reads its stamp) and waits
        # for this lock: slow requests on every worker, for as long as the test holds it.
        cursor.execute("BEGIN")
        cursor.execute("LOCK TABLE papers_category IN ACCESS EXCLUSIVE MODE")
        try:
            threads = held_pages(site["base"], count=SLOW_PAGES, answers=answers)
            time.sleep(2)  # both workers are inside a page now, the rest queued
            checks = []
            for _ in range(20):
                checks.append(timed(site["health"] + "/healthz", timeout=5))
                time.sleep(0.05)
            # The same check on the site's port waits behind the pages.
            queued = timed(site["base"] + "/healthz", timeout=1)
            busy = answers == []
        finally:
            cursor.execute("ROLLBACK")
    for thread in threads:
        thread.join(timeout=60)
    seconds = [s for s, _ in checks]
    print(
        f"\n/healthz on its port with {WORKERS} of {WORKERS} workers busy: "
        f"p50={statistics.median(seconds) * 1000:.1f}ms max={max(seconds) * 1000:.1f}ms "
        f"({len(checks)} checks); on the site's port: {queued[1]} after {queued[0] * 1000:.0f}ms"
    )
    assert busy, answers  # no page had been answered while the checks ran
    assert {status for _, status in checks} == {200}, checks
    assert max(seconds) < LIMIT_SECONDS, seconds
    assert queued[1] == "ReadTimeout"  # what the balancer saw before: its check timed out
    assert answers == [200] * SLOW_PAGES  # the pages were served once the lock went


def test_only_the_health_path_is_served_on_its_port(site):
    health = requests.get(site["health"] + "/healthz", timeout=10)
    assert health.status_code == 200
    assert health.json()["database"] == "ok"
    assert health.headers["Cache-Control"] == "no-store"
    assert requests.get(site["health"] + "/list/cs.DC/", timeout=10).status_code == 404
    assert requests.get(site["health"] + "/admin/", timeout=10).status_code == 404


def test_the_answer_is_what_the_workers_reported_lately(tmp_path):
    now = time.time()
    assert health_port.verdict(tmp_path, now=now)[0] == 503  # no worker has reported yet
    down = {"database": "down: connection refused", "redis": "ok"}
    write_report(tmp_path, 101, status=503, checks=down, at=now - 1)
    status, checks = health_port.verdict(tmp_path, now=now)
    assert status == 503 and checks["database"] == "down: connection refused"

    write_report(tmp_path, 102, status=200, checks={"database": "ok", "redis": "ok"}, at=now - 1)
    status, checks = health_port.verdict(tmp_path, now=now)
    assert (status, checks["database"], checks["workers"]) == (
        200,
        "ok",
        "1 of 2 reporting serving",
    )

    # Workers that have not managed a check for longer than STALE_SECONDS (stuck, or gone
    # without a word) count for nothing.
    later = now + health_port.STALE_SECONDS + 1
    status, checks = health_port.verdict(tmp_path, now=later)
    assert status == 503 and checks == {"workers": "none has reported in 5 s"}


def write_report(directory, pid: int, **report) -> None:
    (directory / f"{pid}.json").write_text(json.dumps(report))
