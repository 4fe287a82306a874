"""The production site losing a service under load: Redis killed and restarted, Redis frozen,
the database gone. Real processes: gunicorn (two workers, DJANGO_DEBUG=0) on a private
redis-server that the test kills; the machine's own services are never stopped."""

from __future__ import annotations

import collections
import datetime as dt
import threading
import time
import uuid

import pytest
import redis

from market.ledger import check_ledger
from market.models import Term, Trade
from tests.conftest import PASSWORD
from tests.factories import list_paper, make_paper
from tests.processes import (
    HttpsClient,
    PrivateRedis,
    can_sign_in_to_a_server,
    collect_static,
    database_url,
    free_port,
    production_environment,
    serving,
)

pytestmark = pytest.mark.slow

GOOD = {200, 302}
ACCEPTABLE = GOOD | {503}


class Record:
    """What the client threads saw: (when, what, status, seconds) per request."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rows: list[tuple[float, str, int | str, float]] = []
        self.trades: dict[str, int | str] = {}  # idempotency key → status (or the error)

    def add(self, what: str, status: int | str, started: float) -> None:
        with self.lock:
            self.rows.append((started, what, status, time.monotonic() - started))

    def statuses(self, *, since: float = 0.0, until: float = float("inf")):
        return collections.Counter(
            status for when, _, status, _ in self.rows if since <= when < until
        )


def keep_asking(record: Record, stop: threading.Event, ask) -> None:
    while not stop.is_set():
        started = time.monotonic()
        try:
            what, status = ask()
        except Exception as exc:  # a hang or a dropped connection is a failure too
            what, status = "error", f"{type(exc).__name__}: {exc}"
        record.add(what, status, started)


@pytest.fixture
def site(cs_dc, trader, reader, settings, tmp_path):
    """The production site with papers, a listed term and two people who can sign in."""
    collect_static()
    can_sign_in_to_a_server(settings, PASSWORD, trader, reader)
    for number in range(12):
        list_paper(
            make_paper(title=f"Quorum systems, part {number}", abstract="Every quorum meets."),
            category=cs_dc,
            date=dt.date(2026, 11, 25),
        )
    # Cheap shares: flat out, the trader must not run out of cash (a 409) within the test.
    term = Term.objects.create(phrase="quorum", p0=1_000, k=10)
    cache_server = PrivateRedis()
    cache_server.start()
    output = tmp_path / "gunicorn.log"
    env = production_environment(
        database_url=database_url(),
        REDIS_URL=cache_server.url,
        # Flat out, the trader would reach the trade limit (a 429) within the test.
        RATELIMIT_TRADES_PER_WINDOW="1000000",
    )
    try:
        with serving(env=env, output=output) as base:
            yield {"base": base, "redis": cache_server, "term": term, "output": output}
    finally:
        cache_server.stop()


def redirect_of(response) -> str:
    return f"302 to {response.headers['Location']}"


def run_clients(site, trader, reader, *, outage) -> Record:
    """Three clients (an anonymous reader, a signed-in reader, a trader) ask flat out while
    ``outage(record)`` takes Redis away and brings it back."""
    base, slug = site["base"], site["term"].slug
    record = Record()
    stop = threading.Event()
    trading_client, reading_client = HttpsClient(base), HttpsClient(base)
    trading_client.log_in(trader.username, PASSWORD)
    reading_client.log_in(reader.username, PASSWORD)

    def anonymous():
        return "anonymous list", HttpsClient(base).get("/list/cs.DC/").status_code

    pages = ["/list/cs.DC/", "/portfolio/", f"/market/{slug}/", "/market/"]
    turn = iter(range(10**9))

    def signed_in():
        path = pages[next(turn) % len(pages)]
        response = reading_client.get(path)
        # Never sent to sign in again: the session is read from the database meanwhile.
        status = response.status_code if response.status_code != 302 else redirect_of(response)
        return f"signed-in {path}", status

    def trade():
        key = uuid.uuid4().hex
        try:
            response = trading_client.post(
                f"/market/{slug}/trade/",
                {"side": "buy", "shares": "1", "limit": str(10**12), "key": key},
            )
        except Exception as exc:
            record.trades[key] = f"{type(exc).__name__}"
            raise
        status: int | str = response.status_code
        if status == 302 and response.headers["Location"] != f"/market/{slug}/":
            status = redirect_of(response)  # not the trade's own answer: fails the test
        record.trades[key] = status
        return "trade", status

    threads = [
        threading.Thread(target=keep_asking, args=(record, stop, ask))
        for ask in (anonymous, signed_in, trade)
    ]
    for thread in threads:
        thread.start()
    try:
        outage(record)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
    return record


def summary(record: Record) -> str:
    done = sum(1 for status in record.trades.values() if status == 302)
    slowest = max(seconds for *_, seconds in record.rows)
    return (
        f"{len(record.rows)} requests, statuses {dict(record.statuses())}, trades "
        f"{done} done / {len(record.trades) - done} not, slowest {slowest:.2f} s"
    )


def assert_no_wrong_answers(record: Record, site) -> None:
    statuses = record.statuses()
    unexpected = {status: n for status, n in statuses.items() if status not in ACCEPTABLE}
    assert not unexpected, f"{summary(record)}\n{site['output'].read_text()[-3000:]}"
    # Every trade answered as done is in the ledger, every other one is not.
    stored = set(Trade.objects.filter(key__in=record.trades).values_list("key", flat=True))
    done = {key for key, status in record.trades.items() if status == 302}
    assert stored == done, summary(record)
    assert check_ledger().ok


def cache_keys(site) -> list[bytes]:
    keys = redis.Redis.from_url(site["redis"].url).keys("*")
    return [key if isinstance(key, bytes) else key.encode() for key in keys]


def assert_cache_in_use_again(site, trader) -> None:
    """Without a restart: pages are answered, and they are kept in Redis again."""
    deadline = time.monotonic() + 10
    client = HttpsClient(site["base"])
    while time.monotonic() < deadline:
        assert client.get("/list/cs.DC/").status_code == 200
        if any(b":kept:" in key for key in cache_keys(site)):
            break
        time.sleep(0.2)
    else:
        raise AssertionError(f"nothing is cached in Redis again: {cache_keys(site)}")
    # What the pages show is what the database holds, not a figure kept from before.
    client.log_in(trader.username, PASSWORD)
    term = Term.objects.get(pk=site["term"].pk)
    page = client.get(f"/market/{term.slug}/").text
    assert f"{term.supply:,} shares out" in page  # as the page writes it: 1,088


@pytest.mark.django_db(transaction=True)
def test_redis_killed_for_five_seconds_costs_no_error_and_no_trade(site, trader, reader):
    marks = {}

    def outage(record: Record) -> None:
        time.sleep(3)
        marks["down"] = time.monotonic()
        site["redis"].stop()
        time.sleep(5)
        marks["up"] = time.monotonic()
        site["redis"].start()  # the same port, empty
        time.sleep(4)

    record = run_clients(site, trader, reader, outage=outage)
    during = record.statuses(since=marks["down"], until=marks["up"])
    print(f"\nRedis killed for 5 s: {summary(record)}; while down: {dict(during)}")
    assert_no_wrong_answers(record, site)
    # Pages and trades went on while Redis was down.
    assert during.get(200, 0) > 10 and during.get(302, 0) > 3, dict(during)
    assert_cache_in_use_again(site, trader)


@pytest.mark.django_db(transaction=True)
def test_redis_frozen_for_three_seconds_answers_within_a_second_and_nothing_stale(
    site, trader, reader
):
    marks = {}

    def outage(record: Record) -> None:
        time.sleep(3)
        marks["down"] = time.monotonic()
        site["redis"].pause()  # connections hang; what Redis holds is kept
        time.sleep(3)
        marks["up"] = time.monotonic()
        site["redis"].resume()
        time.sleep(4)

    record = run_clients(site, trader, reader, outage=outage)
    during = [row for row in record.rows if marks["down"] <= row[0] < marks["up"]]
    frozen = dict(record.statuses(since=marks["down"], until=marks["up"]))
    print(f"\nRedis frozen for 3 s: {summary(record)}; while frozen: {frozen}")
    assert_no_wrong_answers(record, site)
    assert max(seconds for *_, seconds in during) < 1.0
    assert_cache_in_use_again(site, trader)


def test_without_the_database_pages_answer_503_with_a_human_message(tmp_path):
    collect_static()
    port = free_port()
    # Nothing listens there: the database is gone, as during a failover.
    gone = f"postgres://postgres@127.0.0.1:{free_port()}/peerrevenue"
    cache_server = PrivateRedis()
    cache_server.start()
    try:
        for redis_url in ("", cache_server.url):  # the cache in the database, or in Redis
            env = production_environment(database_url=gone, REDIS_URL=redis_url)
            with serving(env=env, port=port, ready="/", output=tmp_path / "gunicorn.log") as base:
                client = HttpsClient(base)
                # The sign-in form needs no database; signing in does.
                assert client.get("/accounts/login/").status_code == 200
                answers = [
                    client.get(path) for path in ("/list/cs.DC/", "/market/", "/abs/2611.00001/")
                ]
                answers.append(client.post("/accounts/login/", {"username": "a", "password": "b"}))
                for response in answers:
                    assert response.status_code == 503, (redis_url, response.text[:500])
                    assert "The database is briefly unavailable; try again in a moment" in (
                        response.text
                    )
                    assert response.headers["Retry-After"]
    finally:
        cache_server.stop()


@pytest.mark.django_db(transaction=True)
def test_a_curators_backfill_with_the_broker_down_says_so_and_nothing_fails(site, curator):
    from papers.models import Category, IngestRun

    curator.set_password(PASSWORD)
    curator.save()
    cs_lg = Category.objects.get_or_create(
        code="cs.LG", defaults={"name": "Machine Learning", "archive_code": "cs"}
    )[0]
    client = HttpsClient(site["base"])
    client.get("/admin/login/")
    client.post("/admin/login/?next=/admin/", {"username": curator.username, "password": PASSWORD})
    assert client.get("/admin/papers/category/").status_code == 200
    site["redis"].stop()  # the broker and the cache

    started = time.monotonic()
    response = client.post(
        "/admin/papers/category/",
        {"action": "enable_and_backfill", "_selected_action": str(cs_lg.pk), "index": "0"},
    )
    took = time.monotonic() - started
    print(f"\nThe admin's backfill with the broker down answered in {took:.2f} s")
    assert response.status_code == 302, response.text[:2000]
    assert took < 3, f"{took:.1f} s"
    cs_lg.refresh_from_db()
    assert cs_lg.ingest_enabled
    run = IngestRun.objects.get(category=cs_lg)
    assert run.status == IngestRun.Status.FAILED
    assert "Could not be queued: the task queue (Redis) was unreachable" in run.error
    page = client.get(f"/admin/papers/category/{cs_lg.pk}/change/")
    assert page.status_code == 200 and "Could not be queued" in page.text
