"""One run a day, whatever sends the ingest twice (papers.models.IngestRunQuerySet.ingested_day):
two real processes, each with its own database connection, store the same day's feed at the
same moment, round after round. The lease is left out on purpose, as when a holder stalled past
its expiry and another took over: the database alone must keep the day to one run."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from papers.models import IngestRun, Listing
from tests.papers.helpers import rss_feed, rss_item

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 10
PAPERS = 9

# Reads a feed's path per line, stores it at once, answers "<run pk> <papers created>".
INGESTER = """
import sys
import django
django.setup()
from papers import ingest
from papers.models import Category
category = Category.objects.get(code="cs.DC")
print("ready", flush=True)
for line in sys.stdin:
    run = ingest.ingest_category(category=category, file=line.strip(), once_per_day=True)
    print(run.pk, run.papers_created, flush=True)
"""


def day_feed(tmp_path: Path, number: int) -> tuple[dt.date, Path]:
    day = dt.date(2026, 11, 2) + dt.timedelta(days=number)
    items = [
        rss_item(
            f"2611.{number:02d}{paper:03d}", title=f"Quorum reads, round {number} part {paper}"
        )
        for paper in range(PAPERS)
    ]
    path = tmp_path / f"day-{number}.rss"
    path.write_bytes(rss_feed(items, pub_date=day.strftime("%a, %d %b %Y 00:00:00 -0500")))
    return day, path


def start_ingester() -> subprocess.Popen:
    db = connection.settings_dict
    db_host, db_port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
    env = os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db_host}:{db_port}/{db['NAME']}",
        "REDIS_URL": "",  # tasks the announcement sends run in the process itself
    }
    process = subprocess.Popen(
        [sys.executable, "-c", INGESTER],
        cwd=ROOT,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "ready", process.stderr.read()  # type: ignore[union-attr]
    return process


def test_two_processes_storing_one_day_at_once_make_one_run_every_time(cs_dc, tmp_path):
    processes = [start_ingester() for _ in range(2)]
    answers = []
    try:
        for number in range(ROUNDS):
            day, path = day_feed(tmp_path, number)
            # Both are waiting on their input: they start within a millisecond of each other.
            for process in processes:
                process.stdin.write(f"{path}\n")  # type: ignore[union-attr]
            for process in processes:
                process.stdin.flush()  # type: ignore[union-attr]
            answers.append(
                (day, [process.stdout.readline().split() for process in processes])  # type: ignore[union-attr]
            )
    finally:
        for process in processes:
            process.stdin.close()  # type: ignore[union-attr]
            process.wait(timeout=60)
    for day, pair in answers:
        assert len(pair) == 2 and all(pair), (day, pair, processes[0].stderr.read())  # type: ignore[union-attr]
        runs = IngestRun.objects.filter(date=day)
        # One run recorded, and both processes were told it is theirs.
        assert [(run.status, run.papers_created) for run in runs] == [("succeeded", PAPERS)]
        assert {pk for pk, _ in pair} == {str(runs[0].pk)}
        assert Listing.objects.filter(date=day).count() == PAPERS
