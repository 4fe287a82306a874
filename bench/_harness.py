"""Shared plumbing for the benchmarks: a scratch Postgres database, Django set-up, processes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
POSTGRES_ADMIN_URL = os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432")


def scratch_database(name: str, *, server: str = POSTGRES_ADMIN_URL) -> str:
    """Drop and create a database for this benchmark on ``server`` (a URL without a database
    name); returns its DATABASE_URL."""
    import psycopg

    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{server}/{name}"


def reused_or_scratch(name: str, *, papers: int, reuse: bool) -> tuple[str, bool]:
    """The URL of database ``name``, and whether it already holds ``papers`` papers and
    ``reuse`` asked to keep it; otherwise it is made anew (``scratch_database``)."""
    import psycopg

    url = f"{POSTGRES_ADMIN_URL}/{name}"
    if reuse:
        try:
            with psycopg.connect(url) as conn:
                row = conn.execute("SELECT count(*) FROM papers_paper").fetchone()
                if row is not None and row[0] == papers:
                    return url, True
        except psycopg.Error:
            pass
    return scratch_database(name), False


def setup_offline_django(database_url: str) -> None:
    """Django on ``database_url`` with no Redis, debug off (no query log), static URLs served
    without collectstatic's manifest, and the schema migrated: for in-process benchmarks."""
    setup_django(
        {
            "DATABASE_URL": database_url,
            "REDIS_URL": "",
            "DJANGO_DEBUG": "0",
            "DJANGO_SECRET_KEY": "benchmark-only-secret-key-" + "x" * 40,
            "DJANGO_ALLOWED_HOSTS": "testserver",
            "DJANGO_SECURE_SSL_REDIRECT": "0",
        }
    )
    from django.conf import settings
    from django.core.management import call_command

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    call_command("createcachetable")  # the local cache lives in PostgreSQL without Redis


def production_environment(database_url: str, *, redis_db: int) -> dict[str, str]:
    return {
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:6379/{redis_db}",
        "DJANGO_DEBUG": "0",
        "DJANGO_SECRET_KEY": "benchmark-only-secret-key-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        # wrk speaks plain HTTP straight to gunicorn: there is no TLS proxy to redirect to.
        "DJANGO_SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "WARNING",
    }


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def setup_redis_django(database_url: str, *, redis_db: int) -> None:
    """Django as in production for an in-process benchmark: the cache in Redis (database
    ``redis_db``, emptied), debug off, the schema migrated."""
    setup_django(
        production_environment(database_url, redis_db=redis_db)
        | {"DJANGO_ALLOWED_HOSTS": "testserver"}
    )
    from django.conf import settings
    from django.core.cache import cache
    from django.core.management import call_command

    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
    call_command("migrate", verbosity=0)
    cache.clear()


def require(command: str, hint: str) -> str:
    path = shutil.which(command)
    if not path:
        sys.exit(f"{command} is not installed: {hint}")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(url: str, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def start_gunicorn(
    app: str, *, port: int, env: dict[str, str], workers: int = 2, warmed: bool = False
):
    """``app`` under gunicorn. ``warmed``: with the site's gunicorn hooks, as production runs
    it (Dockerfile, scripts/run.sh), so each worker imports and compiles everything before its
    first request (peerrevenue/warmup.py) instead of in the first seconds measured."""
    config = ["--config", "python:peerrevenue.gunicorn_conf"] if warmed else []
    return subprocess.Popen(
        [
            str(BIN / "gunicorn"),
            *config,
            app,
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--chdir",
            str(ROOT),
        ],
        env=os.environ | env,
        cwd=ROOT,
    )


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def timed_gets(client, path: str, count: int, before_each=None) -> list[float]:
    """Milliseconds for each of ``count`` GETs of ``path`` by a Django test ``client``, each
    asserted to answer 200. ``before_each()``, if given, runs before each and is not timed (a
    change the page must then show)."""
    times = []
    for _ in range(count):
        if before_each is not None:
            before_each()
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
    return times
