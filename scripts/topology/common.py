"""What every topology check uses: the topology's addresses from topology.sh, a check's
``Result``, request tallies, taking services away (``ctl``), the proxy's and the databases'
state, signed-in browsers, trades, and the local arXiv stand-in."""

from __future__ import annotations

import collections
import datetime as dt
import os
import random
import re
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import redis
import requests
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.contrib.auth.hashers import make_password
from django.db import close_old_connections, connections

from accounts.sessions import SessionStore
from tests.papers.helpers import FakeArxiv
from tests.processes import HttpsClient

ROOT = Path(__file__).resolve().parents[2]

ENV = os.environ
TOPOLOGY_DIR = Path(ENV["TOPOLOGY_DIR"])
SCRIPT = ENV.get("TOPOLOGY_SCRIPT", str(ROOT / "scripts/topology.sh"))
PROXY, WEB1, WEB2 = ENV["PROXY_URL"], ENV["WEB1_URL"], ENV["WEB2_URL"]
PASSWORD = "topology checks password"
READERS = 8  # concurrent readers, as the issue counts them
# How long a killed worker's lease may take to expire before the next run ingests.
LEASE_WAIT_SECONDS = float(ENV.get("TOPOLOGY_LEASE_WAIT_SECONDS", "60"))


def listing_days_ahead(today: dt.date, *, count: int = 2) -> list[dt.date]:
    """Consecutive weekdays from two days after ``today``: listing days whose announcements
    (the evening before, New York time) are still to come whenever the checks run, so that
    shares bought now are held at them and earn their dividends. Fixed dates went stale on
    the day they were announced."""
    days: list[dt.date] = []
    day = today + dt.timedelta(days=2)
    while len(days) < count:
        if day.weekday() < 5:
            days.append(day)
        day += dt.timedelta(days=1)
    return days


# The listing days the checks ingest.
DAY_ONE, DAY_TWO = (day.isoformat() for day in listing_days_ahead(dt.datetime.now(dt.UTC).date()))
FEED_DATES = {
    day: dt.date.fromisoformat(day).strftime("%a, %d %b %Y") for day in (DAY_ONE, DAY_TWO)
}
SECOND_CATEGORY = "cs.DS"


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass
class Result:
    name: str
    passed: bool
    figures: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def line(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        figures = ", ".join(f"{key}={value}" for key, value in self.figures.items())
        notes = "".join(f"\n      {note}" for note in self.notes)
        return f"{verdict} {self.name}: {figures}{notes}"


class Statuses:
    """What a stream of requests got, by status (or exception name), with when."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: list[tuple[float, str, int | str, float, str]] = []

    def add(self, what: str, status: int | str, started: float, body: str = "") -> None:
        with self.lock:
            self.rows.append((started, what, status, time.monotonic() - started, body))

    def select(self, *, what: str | None = None, since: float = 0, until: float = float("inf")):
        """The requests that were under way at some moment between ``since`` and ``until``
        (one that hung across an outage's start counts as during it)."""
        return [
            row
            for row in self.rows
            if row[0] < until and row[0] + row[3] >= since and what in (None, row[1])
        ]

    def count(self, *, what: str | None = None, since: float = 0, until: float = float("inf")):
        return collections.Counter(
            row[2] for row in self.select(what=what, since=since, until=until)
        )

    def started_after(self, moment: float) -> collections.Counter:
        return collections.Counter(row[2] for row in self.rows if row[0] >= moment)


def counter_text(counter: collections.Counter) -> str:
    return "{" + ", ".join(f"{key}: {n}" for key, n in sorted(counter.items(), key=str)) + "}"


def server_errors(counter: collections.Counter) -> int:
    """5xx answers, and requests that got no answer at all (a reset, a timeout)."""
    return sum(n for status, n in counter.items() if not isinstance(status, int) or status >= 500)


# --------------------------------------------------------------------------------------------
# The topology: services, proxy state, database statistics
# --------------------------------------------------------------------------------------------


def ctl(action: str, service: str) -> None:
    """Take a service away or bring it back, through topology.sh (one place knows how)."""
    subprocess.run(
        ["bash", SCRIPT, "ctl", action, service],
        check=True,
        env=os.environ | {"TOPOLOGY_DIR": str(TOPOLOGY_DIR)},
        timeout=120,
    )


def proxy_servers() -> dict[str, str]:
    """haproxy's own view: each web server's status (UP, DOWN, …), from its stats socket."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(TOPOLOGY_DIR / "run/haproxy.sock"))
        sock.sendall(b"show stat\n")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    header, *rows = data.decode().splitlines()
    names = header.lstrip("# ").split(",")
    states = {}
    for row in rows:
        values = dict(zip(names, row.split(","), strict=False))
        if values.get("pxname") == "web" and values.get("svname", "").startswith("web"):
            states[values["svname"]] = values["status"]
    return states


def wait_until(condition: Callable[[], bool], *, timeout: float, every: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if condition():
                return True
        except Exception:
            pass
        time.sleep(every)
    return False


def wait_for_proxy(*, up: Iterable[str] = ("web1", "web2"), timeout: float = 60) -> bool:
    return wait_until(lambda: all(proxy_servers().get(n) == "UP" for n in up), timeout=timeout)


def sql(url_name: str, query: str) -> Any:
    """One value from the primary or the replica, on a connection of its own (no cached
    statistics snapshot, and nothing left open across an outage)."""
    with psycopg.connect(ENV[url_name], autocommit=True, connect_timeout=3) as conn:
        return conn.execute(query).fetchone()[0]


def committed_transactions(url_name: str) -> int:
    return int(
        sql(
            url_name,
            "SELECT xact_commit FROM pg_stat_database WHERE datname = 'peerrevenue'",
        )
    )


def replica_lag() -> str:
    """How far the replica's replay is behind the primary's WAL, in bytes, right now."""
    written = sql("PRIMARY_URL", "SELECT pg_current_wal_lsn()::text")
    behind = sql("REPLICA_URL", f"SELECT pg_wal_lsn_diff('{written}', pg_last_wal_replay_lsn())")
    return f"{int(max(behind, 0))} bytes behind"


def flush_cache() -> None:
    redis.Redis.from_url(ENV["REDIS_URL"]).flushdb()


def reconnect() -> None:
    """Our own ORM connection, after the primary went away and came back."""
    for conn in connections.all():
        conn.close()
    close_old_connections()


# --------------------------------------------------------------------------------------------
# People and HTTP
# --------------------------------------------------------------------------------------------


def people(usernames: list[str]) -> None:
    """Accounts that can sign in, all with one password: hashed once (the hasher is slow on
    purpose, and this machine is shared)."""
    user_model = get_user_model()
    existing = set(
        user_model.objects.filter(username__in=usernames).values_list("username", flat=True)
    )
    if existing >= set(usernames):
        return
    hashed = make_password(PASSWORD)
    user_model.objects.bulk_create(
        user_model(username=name, email=f"{name}@example.org", password=hashed)
        for name in usernames
        if name not in existing
    )


def signed_in(username: str, base: str = PROXY) -> HttpsClient:
    """A browser signed in as ``username``: a session made the way login makes one (the
    checks are not about the password hasher, which is slow on purpose), then one page for
    the CSRF cookie that a trade's POST needs."""
    people([username])
    user = get_user_model().objects.get(username=username)
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    client = HttpsClient(base)
    client.session.cookies.set(settings.SESSION_COOKIE_NAME, session.session_key or "")
    client.get("/accounts/login/")
    return client


def all_signed_in(usernames: list[str]) -> list[HttpsClient]:
    people(usernames)
    return [signed_in(name) for name in usernames]


def on(client: HttpsClient, base: str) -> HttpsClient:
    """The same browser (its cookies) talking to another address: another instance."""
    other = HttpsClient(base)
    other.session = client.session
    return other


def buy(client: HttpsClient, slug: str, shares: int = 1) -> requests.Response:
    """Confirm a buy without a quote first: the limit is far above any price, and a fresh key
    makes it a new order (tests/test_outages.py trades the same way)."""
    return client.post(
        f"/market/{slug}/trade/",
        {"side": "buy", "shares": str(shares), "limit": str(10**12), "key": os.urandom(8).hex()},
    )


def traded(response: requests.Response, slug: str) -> bool:
    return response.status_code == 302 and response.headers.get("Location") == f"/market/{slug}/"


def shares_on_portfolio(html: str, slug: str) -> int | None:
    match = re.search(
        rf'<a href="/market/{re.escape(slug)}/">.*?</th>\s*<td class="num"[^>]*>([\d,]+)</td>',
        html,
        re.S,
    )
    return int(match.group(1).replace(",", "")) if match else None


def read_all(paths: list[str], clients: list[HttpsClient]) -> tuple[collections.Counter, list]:
    """Each client reads every path, in its own order, all at once; statuses and seconds."""
    statuses: collections.Counter = collections.Counter()
    seconds: list[float] = []
    lock = threading.Lock()

    def reader(client: HttpsClient, seed: int) -> None:
        order = paths[:]
        random.Random(seed).shuffle(order)
        for path in order:
            started = time.monotonic()
            try:
                status: int | str = client.get(quote(path, safe="/?=&-%")).status_code
            except requests.RequestException as error:
                status = type(error).__name__
            with lock:
                statuses[status] += 1
                seconds.append(time.monotonic() - started)

    with ThreadPoolExecutor(len(clients)) as pool:
        for future in [pool.submit(reader, c, i) for i, c in enumerate(clients)]:
            future.result()
    return statuses, seconds


def keep_asking(record: Statuses, stop: threading.Event, what: str, ask) -> None:
    while not stop.is_set():
        started = time.monotonic()
        try:
            response = ask()
            record.add(what, response.status_code, started, response.text[:2000])
        except requests.RequestException as error:
            record.add(what, type(error).__name__, started)
        time.sleep(0.02)


# --------------------------------------------------------------------------------------------
# Feeds: the sample days, dated and numbered afresh
# --------------------------------------------------------------------------------------------


def feed(*, day: str, code: str, series: int) -> bytes:
    """The first sample day's feed as if announced for ``day`` in ``code``, with identifiers of
    its own (2612.<series>NNNN), so that every check's day brings new papers."""
    text = (ROOT / "sample/cs.DC-2026-11-24.rss").read_text()
    text = text.replace("Tue, 24 Nov 2026", FEED_DATES[day]).replace("cs.DC", code)
    text = re.sub(r"2611\.\d(\d{4})", lambda m: f"2612.{series}{m.group(1)}", text)
    return text.encode()


def start_arxiv() -> FakeArxiv:
    return FakeArxiv(port=int(ENV["ARXIV_PORT"]))
