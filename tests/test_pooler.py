"""The site behind a real pgbouncer in transaction mode (DATABASE_POOLER=transaction), started by
the test on its own port with a pool of two server connections, so that every client's
transactions share and switch them: cold term pages (their trend counted on the spot), the
reader's pages, quotes and trades, and two ingests of one feed at once; then pgbouncer stopped
for three seconds under load: 503s, never a 500, and the same gunicorn serves again once it is
back. The machine's PostgreSQL is never stopped."""

from __future__ import annotations

import collections
import datetime as dt
import itertools
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from django.db import connection

from market.ledger import check_ledger
from market.models import Term, Trade
from papers.models import IngestRun, Listing
from tests.conftest import PASSWORD
from tests.factories import list_paper, make_paper
from tests.processes import (
    ROOT,
    HttpsClient,
    PrivatePgbouncer,
    PrivateRedis,
    can_sign_in_to_a_server,
    collect_static,
    production_environment,
    serving,
)

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PHRASES = ["consensus", "quorum", "gossip", "leader election", "byzantine", "sharding"]
READERS = 8
POOLED = {"DATABASE_POOLER": "transaction"}


class Record:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: list[tuple[float, str, int | str]] = []

    def add(self, what: str, status: int | str, started: float) -> None:
        with self.lock:
            self.rows.append((started, what, status))

    def statuses(self, since: float = 0.0, until: float = float("inf")) -> collections.Counter:
        return collections.Counter(s for when, _, s in self.rows if since <= when < until)

    def by_page(self) -> dict[str, collections.Counter]:
        pages: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        for _, what, status in self.rows:
            pages[what][status] += 1
        return dict(pages)


@pytest.fixture
def pooled_site(cs_dc, trader, reader, settings, tmp_path):
    collect_static()
    can_sign_in_to_a_server(settings, PASSWORD, trader, reader)
    for number in range(40):
        list_paper(
            make_paper(
                title=f"Quorum systems, part {number}",
                abstract="Consensus by gossip: a leader election that tolerates byzantine "
                "faults, with sharding.",
                authors=["Leslie Lamport", f"Author {number}"],
            ),
            category=cs_dc,
            date=dt.date(2026, 11, 20) + dt.timedelta(days=number % 4),
        )
    terms = [Term.objects.create(phrase=phrase, p0=1_000, k=10) for phrase in PHRASES]
    cs_dc.toggle_watch(reader)
    db = connection.settings_dict
    bouncer = PrivatePgbouncer(database=db["NAME"], pool_size=2)
    bouncer.start()
    cache = PrivateRedis()  # cold: no trend counted, no page kept
    cache.start()
    env = production_environment(
        database_url=bouncer.url,
        REDIS_URL=cache.url,
        RATELIMIT_TRADES_PER_WINDOW="1000000",
        RATELIMIT_QUOTES_PER_WINDOW="1000000",
        RATELIMIT_LOGIN_PER_WINDOW="1000000",
        **POOLED,
    )
    output = tmp_path / "gunicorn.log"
    try:
        with serving(env=env, ready="/healthz", output=output, workers=2) as base:
            yield {
                "base": base,
                "bouncer": bouncer,
                "terms": terms,
                "env": env,
                "output": output,
                "paper": Listing.objects.filter(category=cs_dc).first().paper,  # type: ignore[union-attr]
            }
    finally:
        cache.stop()
        bouncer.remove()


def reader_pages(site) -> list[str]:
    paper = site["paper"]
    return [
        *(f"/market/{term.slug}/" for term in site["terms"]),
        "/list/cs.DC/",
        f"/abs/{paper.arxiv_id}/",
        "/search/?q=quorum+consensus",
        "/author/Leslie%20Lamport/",
        "/market/",
        "/portfolio/",
        "/",
    ]


def ask(client: HttpsClient, path: str) -> int | str:
    try:
        return client.get(path).status_code
    except Exception as exc:  # a dropped or hung connection is a failure too
        return f"{type(exc).__name__}"


def trade_once(client: HttpsClient, slug: str, trades: dict[str, int | str]) -> int | str:
    key = uuid.uuid4().hex
    quoted = ask(client, f"/market/{slug}/quote.json?side=buy&shares=1")
    if quoted != 200:
        return quoted  # a 503 while the pooler is down; anything else fails the test
    try:
        response = client.post(
            f"/market/{slug}/trade/",
            {"side": "buy", "shares": "1", "limit": str(10**12), "key": key},
        )
        status: int | str = response.status_code
        trades[key] = status
        if status == 302 and response.headers["Location"] != f"/market/{slug}/":
            trades[key] = status = f"302 to {response.headers['Location']}"
        elif status == 503 and IN_DOUBT in response.text:
            # The connection went with the trade's COMMIT in flight: the server may have
            # committed it, and the page says to look once the site is back (503.html).
            trades[key] = "503 in doubt"
    except Exception as exc:
        trades[key] = status = type(exc).__name__
    return status


IN_DOUBT = "to see whether"


def signed_in(site, user) -> HttpsClient:
    client = HttpsClient(site["base"])
    client.log_in(user.username, PASSWORD)
    return client


def run_load(site, reader, trader, *, during) -> tuple[Record, dict[str, int | str]]:
    """READERS signed-in readers over every page, and two traders quoting and confirming,
    flat out, while ``during()`` runs."""
    record = Record()
    trades: dict[str, int | str] = {}
    stop = threading.Event()
    pages = reader_pages(site)
    slugs = itertools.cycle([term.slug for term in site["terms"]])

    def read(client: HttpsClient, offset: int) -> None:
        for path in itertools.islice(itertools.cycle(pages), offset, None):
            if stop.is_set():
                return
            started = time.monotonic()
            record.add(path, ask(client, path), started)

    def trade(client: HttpsClient) -> None:
        while not stop.is_set():
            started = time.monotonic()
            record.add("trade", trade_once(client, next(slugs), trades), started)

    threads = [
        threading.Thread(target=read, args=(signed_in(site, reader), n)) for n in range(READERS)
    ]
    threads += [threading.Thread(target=trade, args=(signed_in(site, trader),)) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        during()
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    return record, trades


def assert_money_held(trades: dict[str, int | str]) -> None:
    stored = set(Trade.objects.filter(key__in=trades).values_list("key", flat=True))
    done = {key for key, status in trades.items() if status == 302}
    in_doubt = {key for key, status in trades.items() if status == "503 in doubt"}
    # None answered done unstored; no committed trade answered as not done (a trade whose
    # COMMIT was in flight when the pooler went may be either, and its page says so).
    assert done <= stored, (done - stored, trades)
    assert stored - done <= in_doubt, {key: trades[key] for key in stored - done}
    assert check_ledger().ok


def test_key_paths_through_a_transaction_pooler(pooled_site, reader, trader):
    site = pooled_site
    # Cold term pages: eight readers at once, each trend counted while the others read.
    cold = Record()

    def first_visit(n: int) -> None:
        client = signed_in(site, reader)
        for term in site["terms"][n % 2 :: 2]:
            started = time.monotonic()
            cold.add(term.slug, ask(client, f"/market/{term.slug}/"), started)

    threads = [threading.Thread(target=first_visit, args=(n,)) for n in range(READERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert cold.statuses() == {200: READERS * len(PHRASES) // 2}, cold.by_page()

    before = Trade.objects.count()

    def until_enough_trades() -> None:
        # Eight seconds of load at least, and more (up to forty) on a slow machine until a
        # dozen trades went through: the point is the paths, not how fast they are taken.
        started = time.monotonic()
        time.sleep(8)
        while Trade.objects.count() - before <= 12 and time.monotonic() - started < 40:
            time.sleep(0.5)

    record, trades = run_load(site, reader, trader, during=until_enough_trades)
    print(f"\nThrough pgbouncer: {len(record.rows)} requests, {dict(record.statuses())}")
    assert set(record.statuses()) <= {200, 302}, record.by_page()
    assert sum(1 for status in trades.values() if status == 302) > 10
    assert_money_held(trades)
    assert_no_pooler_errors(site)


INGEST_AT_ONCE = """
import sys, time
import django
django.setup()
from django.core.management import call_command
from django.core.management.base import CommandError
time.sleep(max(0, float(sys.argv[1]) - time.time()))
try:
    call_command("ingest", "cs.DC", "--file", sys.argv[2])
    print("ingested")
except CommandError as exc:
    print(f"refused: {exc}")
"""


def test_two_ingests_of_one_feed_at_once_through_the_pooler(pooled_site):
    site = pooled_site
    feed = ROOT / "sample" / "cs.DC-2026-11-25.rss"
    start = str(time.time() + 4)  # both processes set up and waiting by then
    env = site["env"] | {"DJANGO_SETTINGS_MODULE": "peerrevenue.settings"}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", INGEST_AT_ONCE, start, str(feed)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [process.communicate(timeout=180) for process in processes]
    answers = sorted(out.strip().splitlines()[-1] for out, _ in outputs)
    assert answers == ["ingested", "refused: Another ingest of cs.DC is running; try later."], (
        outputs
    )
    # The announcement's receivers (dividends, the trend count) ran through the pooler too.
    for _, errors in outputs:
        assert "Error calling" not in errors and "failed" not in errors, errors
    assert IngestRun.objects.filter(status="succeeded").count() == 1
    assert not IngestRun.objects.exclude(status="succeeded").exists()
    # Nothing left behind: the next ingest takes the lease at once.
    again = subprocess.run(
        [sys.executable, "-c", INGEST_AT_ONCE, "0", str(feed)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert again.stdout.strip().splitlines()[-1] == "ingested", again.stderr


def test_the_pooler_stopped_for_three_seconds_is_503s_then_200s_without_a_restart(
    pooled_site, reader, trader
):
    site = pooled_site
    marks: dict[str, float] = {}
    health: list[tuple[float, int | str]] = []

    def outage() -> None:
        client = HttpsClient(site["base"])

        def poll(seconds: float) -> None:
            until = time.monotonic() + seconds
            while time.monotonic() < until:
                health.append((time.monotonic(), ask(client, "/healthz")))
                time.sleep(0.1)

        poll(3)
        marks["down"] = time.monotonic()
        site["bouncer"].stop()
        poll(3)
        marks["up"] = time.monotonic()
        site["bouncer"].start()
        poll(6)

    record, trades = run_load(site, reader, trader, during=outage)
    during = record.statuses(marks["down"], marks["up"])
    after = record.statuses(marks["up"] + 2)
    print(
        f"\npgbouncer stopped for 3 s: {len(record.rows)} requests, {dict(record.statuses())};"
        f" while down {dict(during)}; from 2 s after {dict(after)}"
    )
    assert set(record.statuses()) <= {200, 302, 503}, (
        record.by_page(),
        site["output"].read_text()[-5000:],
    )
    assert during[503] > 10, dict(during)
    assert set(after) <= {200, 302} and after[200] > 20, dict(after)
    states = [status for when, status in health if marks["down"] + 0.5 < when < marks["up"]]
    assert states and set(states) == {503}, health
    back = [status for when, status in health if when > marks["up"] + 2]
    assert back and set(back) == {200}, health
    assert_money_held(trades)
    assert_no_pooler_errors(site)


def assert_no_pooler_errors(site) -> None:
    """None of the errors a session-mode assumption gives behind a transaction pooler."""
    output = Path(site["output"]).read_text(errors="replace")
    signs = ('prepared statement "', 'portal "', 'cursor "', "own a lock", "Internal Server Error")
    for sign in signs:
        assert sign not in output, output[-5000:]
