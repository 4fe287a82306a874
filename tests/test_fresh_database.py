"""A new operator's first run on a database of their own, without Redis: ``migrate``, one
offline ``ingest --file``, and the listing is served. Nothing else (no createcachetable, no
network) may be needed."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid

import psycopg
import pytest
from django.db import connection

from tests.processes import ROOT, clean_environment

pytestmark = pytest.mark.slow

FEED = ROOT / "tests/papers/fixtures/rss_new.xml"
# Reserved by RFC 6761: it never resolves, so any attempt to reach arXiv fails at once.
NOWHERE = "http://arxiv.invalid"


@pytest.fixture
def empty_database(db):
    """A database of its own on the tests' PostgreSQL server, dropped afterwards."""
    server = connection.settings_dict
    name = f"pr_fresh_{uuid.uuid4().hex[:12]}"
    admin = f"host={server['HOST']} port={server['PORT']} user={server['USER']} dbname=postgres"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield f"postgres://{server['USER']}@{server['HOST']}:{server['PORT']}/{name}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_migrate_then_ingest_a_file_then_the_listing_works(empty_database):
    env = clean_environment(
        DATABASE_URL=empty_database,
        ARXIV_RSS_URL=NOWHERE + "/rss/{category}",
        ARXIV_API_URL=NOWHERE + "/api/query",
    )
    migrated = manage("migrate", "--no-input", env=env)
    assert migrated.returncode == 0, migrated.stderr[-3000:]

    started = time.monotonic()
    ingested = manage("ingest", "cs.DC", "--file", str(FEED), env=env)
    took = time.monotonic() - started
    assert ingested.returncode == 0, ingested.stderr[-3000:]
    assert "cs.DC 2026-11-24: 2 items" in ingested.stdout
    assert "arxiv.invalid" not in ingested.stderr  # it never tried the network
    assert took < 20, f"{took:.1f} s"  # Django's start-up, not ~31 s of retries

    script = (
        "from django.test import Client; from django.core.cache import caches; "
        "response = Client().get('/list/cs.DC/'); "
        "print(response.status_code, type(caches['default']).__name__, "
        "'Raft with Leases' in response.content.decode())"
    )
    served = manage("shell", "--verbosity", "0", "-c", script, env=env)
    assert served.returncode == 0, served.stderr[-3000:]
    assert served.stdout.split() == ["200", "DatabaseCache", "True"]
