"""Which checks there are, in order, and running them (``python scripts/topology [NAME …]``):
a failed check does not stop the others, and the last line is ``TOPOLOGY-RESULTS {json}``."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable

from market.ledger import check_ledger
from tests.papers.helpers import FakeArxiv

from .api import check_api_read_your_writes
from .common import ENV, Result, proxy_servers, reconnect, start_arxiv, wait_for_proxy
from .health import check_healthz, check_healthz_busy
from .outages import check_pooler_down, check_primary_down, check_web_instance_killed
from .readers import check_read_your_writes, check_readers_cold, check_replica_reads
from .workers import check_killed_worker_lease, check_two_beats_one_ingest


def check_ledger_at_end() -> Result:
    report = check_ledger()
    from market.models import Trade

    figures = {"trades": Trade.objects.count(), "check_ledger": "OK" if report.ok else "FAILED"}
    return Result("ledger_at_end", report.ok, figures, [] if report.ok else [report.text()[:800]])


# --------------------------------------------------------------------------------------------
# Running them
# --------------------------------------------------------------------------------------------


def all_checks(arxiv: FakeArxiv) -> dict[str, Callable[[], Result]]:
    # In this order: the readers first, while everything is cold; outages last.
    return {
        "readers_cold": check_readers_cold,
        "healthz": check_healthz,
        "healthz_busy": check_healthz_busy,
        "two_beats_one_ingest": lambda: check_two_beats_one_ingest(arxiv),
        "killed_worker_lease": lambda: check_killed_worker_lease(arxiv),
        "replica_reads": check_replica_reads,
        "read_your_writes": check_read_your_writes,
        "api_read_your_writes": check_api_read_your_writes,
        "primary_down": check_primary_down,
        "pooler_down": check_pooler_down,
        "web_instance_killed": check_web_instance_killed,
        "ledger_at_end": check_ledger_at_end,
    }


def main(names: list[str]) -> int:
    arxiv = start_arxiv()
    try:
        if not wait_for_proxy(timeout=60):
            print(f"haproxy never saw both instances up: {proxy_servers()}", flush=True)
        checks = all_checks(arxiv)
        unknown = set(names) - set(checks)
        if unknown:
            print(f"unknown checks: {', '.join(sorted(unknown))}; known: {', '.join(checks)}")
            return 2
        results = []
        # TOPOLOGY_REPEAT=N runs each chosen check N times in a row (a race shows in some runs).
        repeat = int(ENV.get("TOPOLOGY_REPEAT", "1"))
        chosen = [(n, c) for n, c in checks.items() if not names or n in names]
        for name, check in [pair for pair in chosen for _ in range(repeat)]:
            started = time.monotonic()
            try:
                result = check()
            except Exception as error:  # one broken check must not hide the others' figures
                result = Result(name, False, {"error": f"{type(error).__name__}: {error}"})
                result.notes.append(traceback.format_exc(limit=4).replace("\n", "\n      "))
                reconnect()
            result.figures["took"] = f"{time.monotonic() - started:.1f}s"
            print(result.line(), flush=True)
            results.append(result)
    finally:
        arxiv.close()
    passed = sum(r.passed for r in results)
    print(f"{passed} of {len(results)} checks passed", flush=True)
    summary = {r.name: {"passed": r.passed, "figures": r.figures} for r in results}
    print("TOPOLOGY-RESULTS " + json.dumps(summary, default=str), flush=True)
    return 0 if passed == len(results) else 1
