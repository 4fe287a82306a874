"""Checks of the workers and beats: two beats fire one ingest, and a worker killed while it
holds the ingest lease leaves it to expire and the next run to ingest."""

from __future__ import annotations

import collections
import threading
import time

import redis
from django.utils import timezone

from market.ledger import check_ledger
from market.models import DividendEvent, Mention, Term
from papers.models import Category, IngestRun
from tests.papers.helpers import FakeArxiv, Reply

from .common import (
    DAY_ONE,
    DAY_TWO,
    ENV,
    LEASE_WAIT_SECONDS,
    SECOND_CATEGORY,
    TOPOLOGY_DIR,
    Result,
    buy,
    ctl,
    feed,
    signed_in,
    traded,
    wait_until,
)


def wait_for_quiet_ingest(*, timeout: float) -> None:
    """Until no ingest is running and the queues are empty, three polls in a row."""
    broker = redis.Redis.from_url(ENV["REDIS_URL"])
    quiet = 0

    def settled() -> bool:
        nonlocal quiet
        idle = not IngestRun.objects.filter(status=IngestRun.Status.RUNNING).exists()
        idle &= broker.llen("celery") == 0 and broker.llen("ingest") == 0
        quiet = quiet + 1 if idle else 0
        return quiet >= 3

    wait_until(settled, timeout=timeout, every=1)


def beat_ticks(name: str) -> int:
    path = TOPOLOGY_DIR / f"log/{name}.log"
    return path.read_text().count("Sending due task") if path.exists() else 0


def check_two_beats_one_ingest(arxiv: FakeArxiv) -> Result:
    """Two beats started on purpose fire the daily pipeline at the same tick, two workers take
    its tasks: one ingest per category and day, its dividends paid once, the books balance."""
    Category.objects.filter(code=SECOND_CATEGORY).update(ingest_enabled=True)
    codes = ["cs.DC", SECOND_CATEGORY]
    for series, code in enumerate(codes, start=4):
        arxiv.route(f"/rss/{code}", Reply(200, feed(day=DAY_ONE, code=code, series=series)))
    # A holder of every term before the day is announced, inside its papers' windows.
    holder = signed_in("holder")
    slugs = list(Term.objects.listed().values_list("slug", flat=True))
    bought = sum(traded(buy(holder, slug, 2), slug) for slug in slugs)

    ctl("stop", "beat")  # the production beat would not fire now anyway; it is not counted
    ctl("start", "beat-extra1")
    ctl("start", "beat-extra2")
    fired = wait_until(
        lambda: beat_ticks("beat-extra1") >= 1 and beat_ticks("beat-extra2") >= 1, timeout=60
    )
    ctl("stop", "beat-extra1")
    ctl("stop", "beat-extra2")
    ctl("start", "beat")
    ticks = beat_ticks("beat-extra1") + beat_ticks("beat-extra2")
    wait_for_quiet_ingest(timeout=90)

    runs = IngestRun.objects.filter(date=DAY_ONE)
    succeeded = collections.Counter(
        runs.filter(status=IngestRun.Status.SUCCEEDED).values_list("category__code", flat=True)
    )
    by_status = collections.Counter(runs.values_list("category__code", "status"))
    mentions = Mention.objects.filter(date=DAY_ONE).count()
    events = DividendEvent.objects.filter(date=DAY_ONE)
    paid = events.filter(shares__gt=0).count()
    ledger = check_ledger()
    per_day_ok = all(succeeded[code] == 1 for code in codes)
    # The holder bought just now, inside the papers' submission windows (market/windows.py):
    # by the rule those shares earn nothing from these papers, so every event pays no one.
    dividends_ok = mentions > 0 and events.count() == mentions and paid == 0
    passed = fired and per_day_ok and dividends_ok and ledger.ok
    figures = {
        "buys": f"{bought}/{len(slugs)}",
        "beat ticks sent": ticks,
        "ingests that succeeded per category": dict(succeeded),
        "runs by (category, status)": {f"{c} {s}": n for (c, s), n in by_status.items()},
        "skipped (worker logs)": worker_log_count("Skipping"),
        "mentions": mentions,
        "dividend events": events.count(),
        "paid to holders (bought inside the windows: none due)": paid,
        "check_ledger": "OK" if ledger.ok else f"{len(ledger.violations)} violations",
    }
    notes = [] if ledger.ok else [ledger.text()[:500]]
    return Result("two_beats_one_ingest", passed, figures, notes)


def worker_log_count(text: str) -> int:
    return sum(
        (TOPOLOGY_DIR / f"log/worker{n}.log").read_text().count(text)
        for n in (1, 2)
        if (TOPOLOGY_DIR / f"log/worker{n}.log").exists()
    )


def worker_holding(task_id: str) -> str | None:
    for n in (1, 2):
        path = TOPOLOGY_DIR / f"log/worker{n}.log"
        if path.exists() and task_id in path.read_text():
            return f"worker{n}"
    return None


def check_killed_worker_lease(arxiv: FakeArxiv) -> Result:
    """A worker killed outright (SIGKILL to the whole process group) while it holds the ingest
    lease, waiting on arXiv: a later run of the same category ingests the day."""
    from papers.tasks import ingest_category

    category = Category.objects.get(code="cs.DC")
    day_two = feed(day=DAY_TWO, code="cs.DC", series=6)
    asked = threading.Event()

    def slow_then_quick(request) -> Reply:
        if not asked.is_set():
            asked.set()
            time.sleep(20)  # the worker dies while it waits for this download
        return Reply(200, day_two)

    arxiv.route_function("/rss/cs.DC", slow_then_quick)
    skipped_before = worker_log_count("Skipping")
    task = ingest_category.delay(category.pk)
    if not wait_until(asked.is_set, timeout=30):
        # Before any kill: the run never fetched. A lock left behind by an earlier ingest
        # (an advisory lock on a pooled server connection outlives its client) says "Skipping".
        figures = {
            "error": "the run never asked for the feed",
            "runs skipped meanwhile": worker_log_count("Skipping") - skipped_before,
        }
        return Result("killed_worker_lease", False, figures)
    wait_until(lambda: worker_holding(task.id) is not None, timeout=10)
    holder = worker_holding(task.id)
    if holder is None:
        return Result("killed_worker_lease", False, {"error": "no worker log names the task"})
    killed_at = time.monotonic()
    killed_on_server = timezone.now()
    ctl("kill", holder)

    attempts = 0
    ingested_after = None
    deadline = killed_at + LEASE_WAIT_SECONDS

    def ingesting() -> bool:
        # A run started since the kill and not finished: asking again now would be asking for
        # a second ingest (a run asked for after one started fetches afresh, by design).
        return IngestRun.objects.filter(
            category=category, started_at__gte=killed_on_server, status=IngestRun.Status.RUNNING
        ).exists()

    while time.monotonic() < deadline:
        if not ingesting():
            attempts += 1
            ingest_category.delay(category.pk)
        if wait_until(
            lambda: IngestRun.objects.filter(
                date=DAY_TWO, category=category, status=IngestRun.Status.SUCCEEDED
            ).exists(),
            timeout=5,
        ):
            ingested_after = time.monotonic() - killed_at
            break
    ctl("start", holder)
    wait_for_quiet_ingest(timeout=30)
    succeeded = IngestRun.objects.filter(
        date=DAY_TWO, category=category, status=IngestRun.Status.SUCCEEDED
    ).count()
    figures = {
        "killed": holder,
        "runs sent after the kill": attempts,
        "ingested after": f"{ingested_after:.1f}s" if ingested_after else "never",
        "succeeded runs of the day": succeeded,
        "limit": f"{LEASE_WAIT_SECONDS:.0f}s",
    }
    return Result("killed_worker_lease", ingested_after is not None and succeeded == 1, figures)
