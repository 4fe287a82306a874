"""Shared plumbing for the benchmarks: a scratch Postgres database, Django set-up, processes."""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
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


def like_a_worker() -> None:
    """Make this process what a gunicorn worker is before its first request: warmed up, and
    what it holds then frozen out of the garbage collector's way (``peerrevenue.warmup``).
    Without it a full collection of the benchmark's own seeding falls on a timed render
    (``BENCH_NO_SETTLE=1`` leaves the freezing out, to see what it changes)."""
    from peerrevenue.warmup import settle, warm

    warm()
    if not os.environ.get("BENCH_NO_SETTLE"):
        settle()


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


TRADES_PER_SECOND = 20  # bench/pages.py's live market


@contextlib.contextmanager
def market_trading(
    database_url: str, *, redis_db: int | None = None
) -> Iterator[Callable[[], int]]:
    """A busy market beside the renders: another process, as another worker of the site would
    be, trading through market.trading at ``TRADES_PER_SECOND`` (not a thread of the measuring
    process, whose share of the interpreter would be counted in the renders' time); yields a
    function that says how many trades it made once it has stopped. ``redis_db``: its Django
    set up with the cache in Redis, as the measuring process's, else as a local site's."""
    command = [sys.executable, __file__, "--trade", "--database-url", database_url]
    if redis_db is not None:
        command += ["--redis-db", str(redis_db)]
    trader = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert trader.stdout is not None
    made: list[int] = []
    try:
        # Setting Django up may print first (the cache table's creation).
        for line in trader.stdout:
            if line.strip() == "trading":
                break
        else:
            sys.exit("the trading process did not start")
        yield lambda: made[0] if made else 0
    finally:
        trader.send_signal(signal.SIGTERM)
        made.append(int(trader.stdout.read().split()[-1] or 0))
        trader.wait()


def _trade_until_stopped() -> None:
    """The trading process: random buys and sells of the listed terms by 20 traders, until
    SIGTERM; prints the trades it made."""
    from django.contrib.auth import get_user_model

    from market import trading
    from market.models import Term

    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    users = [
        get_user_model().objects.get_or_create(username=f"bench-live-{n}")[0] for n in range(20)
    ]
    terms = list(Term.objects.listed().order_by("pk")[:40])
    assert terms, "no listed term to trade"
    rng = random.Random(23)
    made, due = 0, time.monotonic()
    print("trading", flush=True)
    while not stopping.is_set():
        user, term = rng.choice(users), rng.choice(terms)
        try:
            # A mix that checks a holding before each sell, as a trader's "Sell" would.
            if rng.random() < 0.4 and trading.holding(user, term) > 0:
                trading.sell(
                    user=user, term=term, shares=1, min_proceeds=None, key=str(uuid.uuid4())
                )
            else:
                trading.buy(user=user, term=term, shares=1, max_cost=None, key=str(uuid.uuid4()))
            made += 1
        except trading.TradeError:
            pass
        due += 1 / TRADES_PER_SECOND
        stopping.wait(max(0.0, due - time.monotonic()))
    print(made, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The benchmarks' trading process.")
    parser.add_argument("--trade", action="store_true", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--redis-db", type=int)
    arguments = parser.parse_args()
    if arguments.redis_db is None:
        setup_offline_django(arguments.database_url)
    else:
        setup_django(production_environment(arguments.database_url, redis_db=arguments.redis_db))
    _trade_until_stopped()
