"""A real primary and a real streaming replica (private PostgreSQL 15 clusters on their own
ports, the replica made with ``pg_basebackup -R`` and replaying 1 s behind), two gunicorn
instances reading from it: reader pages come from the replica, a trade shows at once on the
other instance, and with the primary stopped the site reads on and refuses writes politely."""

from __future__ import annotations

import collections
import re
import subprocess
import sys
import threading
import time
import uuid

import psycopg
import pytest
import redis

from tests.conftest import PASSWORD
from tests.processes import (
    ROOT,
    HttpsClient,
    PrivatePgbouncer,
    PrivatePostgres,
    PrivateRedis,
    collect_static,
    free_port,
    production_environment,
    serving,
    start_gunicorn,
    stop_process,
    wait_for,
)

pytestmark = pytest.mark.slow

PAUSED = "Trading is paused."
NOTHING_SAVED = "nothing was traded or saved"
READER_PAGES = ["/list/cs.DC/", "/abs/2611.00003/", "/market/", "/market/quorum/"]

SEED = f"""
import datetime as dt
from django.contrib.auth import get_user_model
from market.models import Term
from papers.models import Category
from tests.factories import list_paper, make_paper
cs_dc, _ = Category.objects.get_or_create(code="cs.DC", defaults={{"name": "Distributed Computing",
    "archive_code": "cs", "archive_name": "Computer Science", "ingest_enabled": True}})
for number in range(6):
    list_paper(make_paper(arxiv_id=f"2611.{{number:05d}}", title=f"Quorum systems, part {{number}}",
        abstract="Every quorum meets."), category=cs_dc, date=dt.date(2026, 11, 25))
Term.objects.create(phrase="quorum", p0=1_000, k=10)
User = get_user_model()
User.objects.create_user("tobias", "tobias@example.org", {PASSWORD!r})
User.objects.create_user("rosalind", "rosalind@example.org", {PASSWORD!r})
"""


def manage(env: dict[str, str], *arguments: str) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def topology(tmp_path_factory):
    """Primary + 1 s replica + Redis + two gunicorn instances (their own control sockets)."""
    collect_static()
    tmp = tmp_path_factory.mktemp("replica")
    primary, replica, cache_server = PrivatePostgres(), PrivatePostgres(), PrivateRedis()
    servers: list[subprocess.Popen] = []
    try:
        primary.create()
        env = production_environment(
            database_url=primary.url(),
            REDIS_URL=cache_server.url,
            RATELIMIT_TRADES_PER_WINDOW="1000000",
        )
        cache_server.start()
        manage(env, "migrate", "--no-input", "-v0")
        manage(env, "shell", "-c", SEED)
        replica.replica_of(primary, apply_delay="1s")
        env["DATABASE_REPLICA_URL"] = replica.url()
        env["METRICS_TOKEN"] = "scrape-me"
        bases = []
        for name in ("a", "b"):
            port = free_port()
            servers.append(
                start_gunicorn(
                    env=env | {"PROMETHEUS_MULTIPROC_DIR": str(tmp / f"metrics-{name}")},
                    port=port,
                    workers=1,
                    output=tmp / f"gunicorn-{name}.log",
                    control_socket=tmp / f"gunicorn-{name}.ctl",
                )
            )
            bases.append(f"http://127.0.0.1:{port}")
        for base in bases:
            wait_for(base + "/market/rules/", timeout=60)
        yield {
            "primary": primary,
            "replica": replica,
            "bases": bases,
            "tmp": tmp,
            "redis": cache_server.url,
        }
    finally:
        for server in servers:
            stop_process(server)
        cache_server.stop()
        replica.remove()
        primary.remove()


def transactions(cluster: PrivatePostgres) -> int:
    """Transactions the site's database has run on ``cluster`` (asked from another database,
    so that asking does not count)."""
    with psycopg.connect(cluster.url("postgres"), autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'peerrevenue'"
        ).fetchone()
        assert row is not None
        return int(row[0])


def output_of(topology) -> str:
    return "\n".join(
        (topology["tmp"] / f"gunicorn-{name}.log").read_text()[-3000:] for name in ("a", "b")
    )


def test_reader_pages_are_served_by_the_replica(topology):
    # Each worker's first request opens its connections (Django asks the new connection for
    # type OIDs): those are not the pages' reads.
    for base in topology["bases"]:
        for path in READER_PAGES:
            assert HttpsClient(base).get(path).status_code == 200
    # A backend gone idle reports its transactions to pg_stat_database within 10 s
    # (PGSTAT_IDLE_INTERVAL): wait that long, so that those first connections' type look-ups
    # are counted before the count below starts, not in it.
    time.sleep(11)
    primary_before, replica_before = (
        transactions(topology["primary"]),
        transactions(topology["replica"]),
    )
    asked = 0
    for base in topology["bases"]:
        client = HttpsClient(base)
        for _ in range(5):
            for path in READER_PAGES:
                response = client.get(path)
                assert response.status_code == 200, (path, response.text[:500])
                asked += 1
    # Statistics reach pg_stat_database when the server's backends flush them (within ~10 s
    # when idle): wait until the replica's have, by which time the primary's have too.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        on_replica = transactions(topology["replica"]) - replica_before
        if on_replica >= asked:
            break
        time.sleep(0.5)
    on_primary = transactions(topology["primary"]) - primary_before
    print(f"\n{asked} reader GETs: transactions on the replica {on_replica}, primary {on_primary}")
    assert on_replica >= asked
    # The primary's own background work (autovacuum) may run one now and then; the pages none.
    assert on_primary <= 1, on_primary


def shares_held(page: str) -> int:
    found = re.search(r"Sell all (\d+) shares of quorum", page)
    return int(found.group(1)) if found else 0


def test_a_trade_then_the_portfolio_on_the_other_instance_shows_it_every_time(topology):
    first, other = topology["bases"]
    trader = HttpsClient(first)
    trader.log_in("tobias", PASSWORD)
    elsewhere = HttpsClient(other)
    elsewhere.session.cookies = trader.session.cookies  # the same browser, another instance
    held = shares_held(elsewhere.get("/portfolio/").text)
    shown = 0
    for _ in range(100):
        response = trader.post(
            "/market/quorum/trade/",
            {"side": "buy", "shares": "1", "limit": str(10**12), "key": uuid.uuid4().hex},
        )
        assert response.status_code == 302, response.text[:1000]
        held += 1
        page = elsewhere.get("/portfolio/")
        assert page.status_code == 200
        shown += shares_held(page.text) == held
    print(f"\nA trade, then the portfolio on the other instance: {shown} of 100 showed it")
    assert shown == 100
    # Once the replica has replayed the last trade, this client reads from it again.
    deadline = time.monotonic() + 20
    while "pr_written" in elsewhere.session.cookies and time.monotonic() < deadline:
        assert shares_held(elsewhere.get("/portfolio/").text) == held
        time.sleep(0.3)
    assert "pr_written" not in elsewhere.session.cookies


def test_metrics_show_the_replica_and_the_trades(topology):
    response = HttpsClient(topology["bases"][0]).get(
        "/metrics", headers={"Authorization": "Bearer scrape-me"}
    )
    assert response.status_code == 200, response.text[:500]
    text = response.text
    assert 'peerrevenue_database_up{alias="replica"} 1.0' in text
    assert 'peerrevenue_replica_lag_bytes{alias="replica"}' in text
    assert 'peerrevenue_task_queue_length{queue="celery"}' in text
    # The 100 trades of the test before, counted by this instance's worker.
    assert re.search(r'peerrevenue_trades_total\{side="buy"\} [1-9]', text), text[-3000:]
    assert re.search(r'peerrevenue_request_seconds_count\{method="GET",view="market:index"\}', text)
    assert HttpsClient(topology["bases"][0]).get("/metrics").status_code == 403


def test_primary_stopped_for_ten_seconds_reads_on_and_refuses_trades_politely(topology):
    base_a, base_b = topology["bases"]
    trader = HttpsClient(base_a)
    trader.log_in("tobias", PASSWORD)
    reader = HttpsClient(base_b)
    reader.log_in("rosalind", PASSWORD)
    time.sleep(1.5)  # the sign-ins replayed, so the readers read from the replica
    rows: list[tuple[float, str, int, bool]] = []  # (started, what, status, notice shown)
    trades: dict[str, int] = {}
    lock, stop = threading.Lock(), threading.Event()

    def keep_reading(client: HttpsClient, name: str) -> None:
        turn = 0
        while not stop.is_set():
            path = READER_PAGES[turn % len(READER_PAGES)]
            turn += 1
            started = time.monotonic()
            response = client.get(path)
            with lock:
                rows.append((started, name, response.status_code, PAUSED in response.text))

    def keep_trading() -> None:
        while not stop.is_set():
            key = uuid.uuid4().hex
            started = time.monotonic()
            response = trader.post(
                "/market/quorum/trade/",
                {"side": "buy", "shares": "1", "limit": str(10**12), "key": key},
            )
            with lock:
                trades[key] = response.status_code
                rows.append(
                    (started, "trade", response.status_code, NOTHING_SAVED in response.text)
                )
            time.sleep(0.05)

    threads = [
        threading.Thread(target=keep_reading, args=(HttpsClient(base_a), "anonymous")),
        threading.Thread(target=keep_reading, args=(reader, "signed-in")),
        threading.Thread(target=keep_trading),
    ]
    for thread in threads:
        thread.start()
    try:
        time.sleep(2)
        topology["primary"].stop()
        down = time.monotonic()
        time.sleep(5)
        # A load balancer asking /healthz keeps sending readers here: reads only, not down.
        health = HttpsClient(base_b).get("/healthz")
        time.sleep(5)
        up = time.monotonic()
        topology["primary"].start()
        # Trades work again, nothing restarted.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with lock:
                recovered = [row for row in rows if row[0] > up and row[1] == "trade"]
            if any(status == 302 for _, _, status, _ in recovered):
                break
            time.sleep(0.2)
        time.sleep(2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)

    during = [row for row in rows if down < row[0] < up - 0.5]
    after = [row for row in rows if row[0] > up]
    statuses = sorted({(what, status) for _, what, status, _ in rows})
    print(
        f"\nPrimary stopped 10 s: {len(rows)} requests, {len(during)} while down; "
        f"(what, status) seen: {statuses}"
    )
    assert all(status != 500 for _, _, status, _ in rows), output_of(topology)
    reads = [row for row in during if row[1] != "trade"]
    assert len(reads) > 20
    assert all(status == 200 and notice for _, _, status, notice in reads), [
        row for row in reads if row[2] != 200 or not row[3]
    ][:5]
    refused = [row for row in during if row[1] == "trade"]
    assert refused and all(status == 503 and said for _, _, status, said in refused), refused[:5]
    assert any(status == 302 for _, what, status, _ in after if what == "trade"), after[-5:]
    # Every trade answered as done is in the ledger, none answered 503 is.
    with psycopg.connect(topology["primary"].url()) as conn:
        stored = {key for (key,) in conn.execute("SELECT key FROM market_trade").fetchall()}
    done = {key for key, status in trades.items() if status == 302}
    assert done <= stored
    assert not (stored & {key for key, status in trades.items() if status == 503})
    assert health.status_code == 200, health.text
    assert health.json()["serving"] == "reads only"
    assert health.json()["database"].startswith("down")
    # The notice goes once the primary is back.
    assert PAUSED not in HttpsClient(base_b).get("/list/cs.DC/").text


PRODUCTION_POOLER = {
    "server_login_retry": "1",
    "server_connect_timeout": "2",
    "query_wait_timeout": "5",
}


@pytest.fixture(scope="module")
def pooled(topology):
    """One more instance of the same site, its primary behind a pgbouncer in transaction mode
    (as in production): its connections are to the pooler, which stays up when the primary
    stops and answers queries with errors of its own ("server login has been failing")."""
    bouncer = PrivatePgbouncer(
        database="peerrevenue",
        server_port=topology["primary"].port,
        # deploy/pgbouncer/pgbouncer.ini's timeouts: a stopped primary is told at once.
        extra=PRODUCTION_POOLER,
    )
    bouncer.start()
    tmp = topology["tmp"]
    env = production_environment(
        database_url=bouncer.url,
        REDIS_URL=topology["redis"],
        DATABASE_POOLER="transaction",
        DATABASE_REPLICA_URL=topology["replica"].url(),
    )
    output = tmp / "gunicorn-pooled.log"
    try:
        with serving(
            env=env, workers=2, output=output, control_socket=tmp / "gunicorn-pooled.ctl"
        ) as base:
            yield {"base": base, "bouncer": bouncer, "output": output}
    finally:
        bouncer.remove()


def test_behind_a_pooler_readers_get_the_replica_from_the_first_request_the_primary_is_gone(
    topology, pooled
):
    base = pooled["base"]
    reader = HttpsClient(base)
    reader.log_in("rosalind", PASSWORD)
    readers = [(HttpsClient(base), "anonymous") for _ in range(3)] + [(reader, "signed-in")]
    # Every worker has its connections (to the pooler, and through it to the primary) open.
    # The term page is left for the outage: rendered for the first time then, every read of
    # it (its research too) must come from the replica.
    for client, _ in readers:
        for path in READER_PAGES:
            if path != "/market/quorum/":
                assert client.get(path).status_code == 200
    time.sleep(1.5)  # the sign-in replayed
    rows: list[tuple[int, str, str, int, bool]] = []  # (outage, who, path, status, notice)
    lock = threading.Lock()

    def read(client: HttpsClient, who: str, outage: int, until: float) -> None:
        turn = 0
        while time.monotonic() < until:
            path = READER_PAGES[turn % len(READER_PAGES)]
            turn += 1
            response = client.get(path)
            with lock:
                rows.append((outage, who, path, response.status_code, PAUSED in response.text))

    for outage in range(3):
        redis.Redis.from_url(topology["redis"]).flushdb()  # nothing kept by the other instances
        topology["primary"].stop()
        # From the very first request after the stop: no worker has learned it yet.
        until = time.monotonic() + 4
        threads = [
            threading.Thread(target=read, args=(client, who, outage, until))
            for client, who in readers
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        topology["primary"].start()
        # Back to normal (no notice) before the next outage, without a restart.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            page = HttpsClient(base).get("/market/")
            if page.status_code == 200 and PAUSED not in page.text:
                break
            time.sleep(0.3)
        else:
            raise AssertionError("the notice stayed after the primary came back")

    statuses = collections.Counter(status for _, _, _, status, _ in rows)
    print(f"\nPrimary stopped behind pgbouncer, 3 times: {len(rows)} reader GETs, {statuses}")
    assert len(rows) > 30
    wrong = [row for row in rows if row[3] != 200]
    assert not wrong, (wrong[:10], pooled["output"].read_text()[-3000:])
    # The primary was found gone each time (a page that never asks it anything is the
    # replica's already, and rightly shows no notice until the process learns it).
    assert all(any(row[4] for row in rows if row[0] == outage) for outage in range(3))
    # Through the pooler, as in production: its own errors were what the site saw.
    assert "server_login_retry" in pooled["bouncer"].log()
