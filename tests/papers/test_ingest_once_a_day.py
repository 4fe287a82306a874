"""One run a day, whatever sends the ingest twice (papers.models.IngestRunQuerySet.ingested_day):
two real processes, each with its own database connection, store the same day's feed at the
same moment, round after round. The lease is left out on purpose, as when a holder stalled past
its expiry and another took over: the database alone must keep the day to one run. And two
categories' days stored at once, sharing papers, never deadlock on that check."""

from __future__ import annotations

import collections
import datetime as dt
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from django.db import connection

from papers import ingest
from papers.models import Category, IngestRun, Listing, Paper
from tests.papers.helpers import rss_feed, rss_item

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 10
PAPERS = 9

# Reads "<category code> <feed path>" per line, stores it at once, answers
# "<run pk> <papers created>" (or the error).
INGESTER = """
import sys
import django
django.setup()
from papers import ingest
from papers.models import Category
print("ready", flush=True)
for line in sys.stdin:
    code, path = line.split()
    try:
        run = ingest.ingest_category(
            category=Category.objects.get(code=code), file=path, once_per_day=True
        )
    except ingest.IngestError as exc:
        print("failed", str(exc).replace(" ", "_")[:300], flush=True)
    else:
        print(run.pk, run.papers_created, flush=True)
"""


def day_feed(
    tmp_path: Path, number: int, *, code: str = "cs.DC", shared: Sequence[str] = ()
) -> tuple[dt.date, Path]:
    """Day ``number``'s feed of ``code``: PAPERS new papers of its own, and the ``shared``
    papers (cross-listed in cs.DC and cs.DS) under a title of the day."""
    day = dt.date(2026, 11, 2) + dt.timedelta(days=number)
    own = 1 if code == "cs.DC" else 5
    items = [
        rss_item(
            f"2611.{own}{number:01d}{paper:03d}",
            title=f"Quorum reads, round {number} part {paper}",
            categories=(code,),
        )
        for paper in range(PAPERS)
    ]
    items += [
        rss_item(
            arxiv_id,
            title=f"Shared quorums, as of round {number}",
            categories=("cs.DC", "cs.DS"),
            kind="new" if code == "cs.DC" else "cross",
        )
        for arxiv_id in shared
    ]
    path = tmp_path / f"{code}-day-{number}.rss"
    path.write_bytes(
        rss_feed(items, pub_date=day.strftime("%a, %d %b %Y 00:00:00 -0500"))
        .replace(b"cs.DC updates", f"{code} updates".encode())
        .replace(b"/rss/cs.DC<", f"/rss/{code}<".encode())
    )
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
                process.stdin.write(f"cs.DC {path}\n")  # type: ignore[union-attr]
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


def test_two_categories_sharing_papers_store_their_days_at_once(cs_dc, tmp_path):
    """Each category's ingest locks its own row to look for its day, while the other's
    changes papers listed in both (the stamp triggers then lock both categories' rows): every
    day of both categories is stored, never a deadlock."""
    Category.objects.get_or_create(
        code="cs.DS",
        defaults={
            "name": "Data Structures and Algorithms",
            "archive_code": "cs",
            "archive_name": "Computer Science",
        },
    )
    shared = [f"2611.9{paper:04d}" for paper in range(5)]
    _, first = day_feed(tmp_path, 9, shared=shared)
    ingest.ingest_category(category=cs_dc, file=first)  # listed in cs.DC already
    processes = [start_ingester() for _ in range(2)]
    answers = []
    try:
        for number in range(ROUNDS - 1):
            paths = [day_feed(tmp_path, number, code=code, shared=shared)[1] for code in CODES]
            for process, code, path in zip(processes, CODES, paths, strict=True):
                process.stdin.write(f"{code} {path}\n")  # type: ignore[union-attr]
            for process in processes:
                process.stdin.flush()  # type: ignore[union-attr]
            answers.append([process.stdout.readline().split() for process in processes])  # type: ignore[union-attr]
    finally:
        for process in processes:
            process.stdin.close()  # type: ignore[union-attr]
            process.wait(timeout=60)
    assert not [pair for pair in answers if any(answer[0] == "failed" for answer in pair)]
    assert not IngestRun.objects.exclude(status="succeeded").exists()
    stored = collections.Counter(IngestRun.objects.values_list("category__code", flat=True))
    assert stored == {"cs.DC": ROUNDS, "cs.DS": ROUNDS - 1}
    assert (
        Paper.objects.get(arxiv_id=shared[0]).title == f"Shared quorums, as of round {ROUNDS - 2}"
    )


CODES = ("cs.DC", "cs.DS")
