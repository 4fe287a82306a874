"""The production shape on this one machine (scripts/topology.sh): a primary and a streaming
replica, pgbouncer in transaction mode, Redis, two gunicorn instances behind haproxy, two Celery
workers and beat, all private processes on ports of their own. The script runs the checks of
scripts/topology/ against it (readers, ingest with two beats, a killed worker, reads
from the replica, the primary, the pooler and a web instance taken away) and tears it down; this
test asserts that every check passed, and shows every check's figures when one did not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, clean_environment

# Starts a dozen real processes for a couple of minutes: `make test-fast` leaves it out.
pytestmark = pytest.mark.slow

MARK = "TOPOLOGY-RESULTS "


def run_topology() -> tuple[dict[str, dict], str]:
    completed = subprocess.run(
        ["bash", str(ROOT / "scripts/topology.sh")],
        cwd=ROOT,
        # The topology's processes run on this interpreter's environment (the project's venv).
        env=clean_environment(TOPOLOGY_PYTHON_BIN=str(Path(sys.executable).parent)),
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = completed.stdout + completed.stderr
    lines = [line for line in completed.stdout.splitlines() if line.startswith(MARK)]
    assert lines, f"the checks reported nothing (exit {completed.returncode}):\n{output[-6000:]}"
    return json.loads(lines[-1].removeprefix(MARK)), output


def test_the_production_shape_passes_every_check():
    results, output = run_topology()
    report = "\n".join(line for line in output.splitlines() if line.startswith(("PASS", "FAIL")))
    # The figures of every check, kept for whoever reports the run (passed or not).
    (ROOT / "artifacts").mkdir(exist_ok=True)
    (ROOT / "artifacts" / "topology-report.txt").write_text(report + "\n", encoding="utf-8")
    failed = sorted(name for name, result in results.items() if not result["passed"])
    assert not failed, f"{len(failed)} check(s) failed: {', '.join(failed)}\n{report}"
    assert len(results) == 12, report  # every check ran
