"""Checks with a service taken away: the primary, the pooler, a web instance; what readers
and traders get meanwhile."""

from __future__ import annotations

import collections
import itertools
import threading
import time

from django.db import DEFAULT_DB_ALIAS

from papers.models import Paper
from peerrevenue.availability import PAUSE_SECONDS
from tests.processes import HttpsClient

from .common import (
    PROXY,
    WEB1,
    Result,
    Statuses,
    buy,
    counter_text,
    ctl,
    keep_asking,
    proxy_servers,
    reconnect,
    server_errors,
    signed_in,
    wait_for_proxy,
    wait_until,
)
from .readers import quiet_terms


def outage_clients(trader: HttpsClient, slug: str, reader_paths: list[str]):
    record = Statuses()
    stop = threading.Event()
    turn = iter(range(10**9))

    def read():
        return HttpsClient(PROXY).get(reader_paths[next(turn) % len(reader_paths)])

    threads = [
        threading.Thread(target=keep_asking, args=(record, stop, "read", read)),
        threading.Thread(target=keep_asking, args=(record, stop, "read", read)),
        threading.Thread(
            target=keep_asking, args=(record, stop, "trade", lambda: buy(trader, slug))
        ),
    ]
    for thread in threads:
        thread.start()

    def finish() -> None:
        stop.set()
        for thread in threads:
            thread.join(timeout=60)

    return record, finish


def says_nothing_traded(body: str) -> bool:
    return "trad" in body.lower()


def from_haproxy(body: str) -> bool:
    return "No server is available" in body


OUTAGE_TRADERS = itertools.count(1)


def check_primary_down(seconds: float = 10) -> Result:
    """The primary stopped for 10 s: reader pages still 200 (from the replica), trades 503 with
    a message saying nothing was traded, never a 500; then trading again, nothing restarted."""
    # A trader of its own each time the check runs (TOPOLOGY_REPEAT): one trader's grant runs
    # out after a few runs of buying flat out, and a refused buy is no recovery.
    trader = signed_in(f"outage-trader{next(OUTAGE_TRADERS)}")
    slug = quiet_terms()[1 % len(quiet_terms())]
    reader_paths = [
        "/list/cs.DC/",
        "/market/",
        f"/market/{slug}/",
        f"/abs/{Paper.objects.first().arxiv_id}/",
    ]
    record, finish = outage_clients(trader, slug, reader_paths)
    time.sleep(2)
    ctl("stop", "primary")  # returns once the server is down
    stopped = time.monotonic()
    time.sleep(seconds)
    restarting = time.monotonic()
    ctl("start", "primary")
    restarted = time.monotonic()
    recovered = wait_until(
        lambda: any(
            row[2] == 302 for row in record.select(what="trade", since=time.monotonic() - 1)
        ),
        timeout=20,
    )
    recovered_after = time.monotonic() - restarted
    time.sleep(2)
    finish()
    reconnect()
    # Judged over what was under way while the server was down (half a second spare, for an
    # answer that was on its way as it stopped).
    window = {"since": stopped + 0.5, "until": restarting}
    reads = record.count(what="read", **window)
    # A trade still waiting when the server came back (pgbouncer holds a query until its
    # server returns) is traded then, after the outage: only answers given while the server
    # was down must say that nothing was traded.
    under_way = record.select(what="trade", **window)
    trade_rows = [row for row in under_way if row[0] + row[3] < restarting]
    trades = collections.Counter(row[2] for row in trade_rows)
    traded_once_back = sum(1 for row in under_way if row[0] + row[3] >= restarting)
    with_message = sum(1 for row in trade_rows if row[2] == 503 and says_nothing_traded(row[4]))
    proxy_refusals = sum(1 for row in record.rows if row[2] == 503 and from_haproxy(row[4]))
    all_500 = sum(n for status, n in record.count().items() if status == 500)
    passed = (
        reads.get(200, 0) == sum(reads.values()) > 0
        and with_message == sum(trades.values()) > 0
        and all_500 == 0
        and recovered
    )
    figures = {
        "reads while down": counter_text(reads),
        "trades answered while down": counter_text(trades),
        "trades answered once it was back": traded_once_back,
        "503 saying nothing was traded": with_message,
        "haproxy's own 503 (no instance up)": proxy_refusals,
        "500 overall": all_500,
        "trading again after restart": f"{recovered_after:.1f}s" if recovered else "no",
    }
    return Result("primary_down", passed, figures)


def check_pooler_down(seconds: float = 3) -> Result:
    """pgbouncer stopped for 3 s: 503s (never a 500), then pages and trades again without
    restarting anything."""
    # Its own trader each run, as primary_down's: one grant runs out over a few repeats, and
    # then the trades after recovery are refused (409) as spent, not as the pooler's fault.
    trader = signed_in(f"pooler-trader{next(OUTAGE_TRADERS)}")
    slug = quiet_terms()[2 % len(quiet_terms())]
    reader_paths = ["/list/cs.DC/", "/market/", f"/market/{slug}/"]
    record, finish = outage_clients(trader, slug, reader_paths)
    time.sleep(2)
    stopped = time.monotonic()
    ctl("stop", "pgbouncer")
    # With the primary out of reach but a replica answering, an instance still serves readers:
    # /healthz says the database is down and "reads only", and stays 200 for haproxy.
    healthz = HttpsClient(WEB1).get("/healthz")
    healthz_down = healthz.status_code
    said_down = healthz.json().get("database", "").startswith("down")
    time.sleep(seconds)
    ctl("start", "pgbouncer")
    restarted = time.monotonic()

    def healthy_again() -> bool:
        recent = record.rows[-6:]
        return len(recent) == 6 and all(row[2] in (200, 302) for row in recent)

    recovered = wait_until(healthy_again, timeout=20)
    recovered_after = time.monotonic() - restarted
    time.sleep(2)
    finish()
    healthz_up = HttpsClient(WEB1).get("/healthz").status_code
    # Each process that saw the pooler refuse asks again a second later
    # (peerrevenue.availability.PAUSE_SECONDS), so one that has not asked yet may answer a
    # write with the 503 for up to that long after others are back.
    settled = restarted + recovered_after + PAUSE_SECONDS[DEFAULT_DB_ALIAS]
    during = record.count(since=stopped, until=settled)
    after = record.started_after(settled)
    all_500 = server_errors(record.count()) - sum(
        n for status, n in record.count().items() if status == 503
    )
    passed = all_500 == 0 and recovered and set(after) <= {200, 302} and said_down
    figures = {
        "during": counter_text(during),
        "after recovery": counter_text(after),
        "500 or no answer": all_500,
        "recovered after restart": f"{recovered_after:.1f}s" if recovered else "no",
        "counted as after from": f"{settled - restarted:.1f}s after restart",
        "/healthz down/up": f"{healthz_down} {healthz.text.strip()}/{healthz_up}",
    }
    return Result("pooler_down", passed, figures)


def check_web_instance_killed() -> Result:
    """One gunicorn instance killed outright: haproxy routes around it; after its check
    interval (1 s, two failures) no request fails."""
    record = Statuses()
    stop = threading.Event()
    client = HttpsClient(PROXY)
    thread = threading.Thread(
        target=keep_asking, args=(record, stop, "read", lambda: client.get("/market/rules/"))
    )
    thread.start()
    time.sleep(1)
    killed = time.monotonic()
    ctl("kill", "web1")
    marked_down = wait_until(lambda: proxy_servers().get("web1") == "DOWN", timeout=10)
    down_after = time.monotonic() - killed
    settled = time.monotonic()
    time.sleep(5)
    stop.set()
    thread.join(timeout=30)
    ctl("start", "web1")
    back = wait_for_proxy(timeout=30)
    transition = record.count(since=killed, until=settled)
    after = record.count(since=settled)
    failed_after = sum(n for status, n in after.items() if status != 200)
    figures = {
        "marked down after": f"{down_after:.1f}s" if marked_down else "never",
        "while being marked down": counter_text(transition),
        "after": counter_text(after),
        "failed after": failed_after,
        "web1 back in": "yes" if back else "no",
    }
    return Result("web_instance_killed", marked_down and failed_after == 0 and back, figures)
