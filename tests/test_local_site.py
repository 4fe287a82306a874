"""The zero-setup site that `make run` starts runs on SQLite: trading must work there too.

The suite itself runs on Postgres, where a trade is one call of a server-side function; SQLite
trades through the ORM path instead. This reruns the trading, market page and dividend tests on
SQLite in a child pytest, so both paths answer to the same tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import SQLITE_RUN

ROOT = Path(__file__).resolve().parents[1]
MODULES = [
    "tests/market/test_trading.py",
    "tests/market/test_views.py",
    "tests/market/test_dividends.py",
]


def test_trading_and_the_market_pages_work_on_the_local_sqlite_site(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env |= {SQLITE_RUN: "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *MODULES],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-5000:] + result.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary and "skipped" not in summary, summary
