"""Checks of /healthz: each instance answers on the site's port and on its health port, and
the health port answers at once while every worker is busy."""

from __future__ import annotations

import collections
import json
import statistics
import subprocess
import sys
import threading
import time

import requests

from market.models import Term
from papers.models import Paper
from tests.processes import HttpsClient

from .common import (
    ENV,
    READERS,
    WEB1,
    WEB2,
    Result,
    Statuses,
    counter_text,
    flush_cache,
    proxy_servers,
)


def check_healthz() -> Result:
    """Each instance answers /healthz 200 with the database and Redis up, on the site's port
    and on its health port (what haproxy asks)."""
    figures = {}
    ok = True
    for name, base in (
        ("web1", WEB1),
        ("web2", WEB2),
        ("web1 health port", ENV["WEB1_HEALTH_URL"]),
        ("web2 health port", ENV["WEB2_HEALTH_URL"]),
    ):
        started = time.monotonic()
        status = HttpsClient(base).get("/healthz").status_code
        figures[name] = f"{status} in {(time.monotonic() - started) * 1000:.0f}ms"
        ok &= status == 200
    figures["haproxy"] = proxy_servers()
    return Result("healthz", ok, figures)


# Asks the URL every 0.1 s for argv[2] seconds; prints [[seconds, status], …].
HEALTH_POLLER = """
import json, sys, time, urllib.error, urllib.request
rows, until = [], time.monotonic() + float(sys.argv[2])
while time.monotonic() < until:
    started = time.monotonic()
    try:
        status = urllib.request.urlopen(sys.argv[1], timeout=2).status
    except urllib.error.HTTPError as error:
        status = error.code
    except OSError as error:
        status = type(error).__name__
    rows.append([time.monotonic() - started, status])
    time.sleep(0.1)
print(json.dumps(rows))
"""


def check_healthz_busy(seconds: float = 8) -> Result:
    """Every worker of web1 busy on cold pages (8 readers at once, nothing cached): its health
    port still answers (95 % within 100 ms), and haproxy keeps both instances in; the site's
    port, asked the same meanwhile, for contrast."""
    flush_cache()
    slugs = list(Term.objects.listed().values_list("slug", flat=True))
    papers = list(Paper.objects.values_list("arxiv_id", flat=True))
    paths = [f"/market/{slug}/" for slug in slugs] + [f"/abs/{arxiv_id}/" for arxiv_id in papers]
    stop = threading.Event()
    pages = Statuses()

    def read(offset: int) -> None:
        client = HttpsClient(WEB1)
        turn = offset
        while not stop.is_set():
            path = paths[turn % len(paths)]
            turn += 1
            started = time.monotonic()
            try:
                pages.add("page", client.get(path).status_code, started)
            except requests.RequestException as error:
                pages.add("page", type(error).__name__, started)
            if turn % 5 == 0:
                flush_cache()  # cold again: the pages keep the workers busy

    readers = [threading.Thread(target=read, args=(n * 7,)) for n in range(READERS)]
    for thread in readers:
        thread.start()
    time.sleep(1)  # every worker inside a page
    # Timed from a process of its own: in this one the readers' threads would hold the GIL
    # and make every answer look late.
    pollers = [
        subprocess.Popen(
            [sys.executable, "-c", HEALTH_POLLER, url + "/healthz", str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for url in (ENV["WEB1_HEALTH_URL"], WEB1)  # the health port, and the site's for contrast
    ]
    states: set[str] = set()
    while any(poller.poll() is None for poller in pollers):
        states.update(f"{name} {state}" for name, state in proxy_servers().items())
        time.sleep(0.2)
    checks, on_site_port = ([tuple(row) for row in json.loads(p.communicate()[0])] for p in pollers)
    stop.set()
    for thread in readers:
        thread.join(timeout=60)
    seconds_taken = sorted(took for took, _ in checks)
    answered = collections.Counter(status for _, status in checks)
    # p95, not the maximum: on this shared 2-core machine a process (even the idle master, even
    # the poller) is now and then not scheduled for a few hundred ms, which no server can help.
    # tests/test_health_port.py holds every answer to 100 ms with the workers busy.
    p95 = seconds_taken[int(len(seconds_taken) * 0.95)]
    site_port = sorted(took for took, _ in on_site_port)
    passed = (
        answered.get(200, 0) == len(checks) > 0 and p95 < 0.1 and states <= {"web1 UP", "web2 UP"}
    )
    figures = {
        "pages meanwhile": f"{len(pages.rows)} {counter_text(pages.count())}",
        "health checks": counter_text(answered),
        "p50": f"{statistics.median(seconds_taken) * 1000:.1f}ms",
        "p95": f"{p95 * 1000:.1f}ms",
        "max": f"{seconds_taken[-1] * 1000:.1f}ms",
        "the site's port meanwhile": (
            f"{counter_text(collections.Counter(status for _, status in on_site_port))} "
            f"p50={statistics.median(site_port) * 1000:.0f}ms max={site_port[-1] * 1000:.0f}ms"
        ),
        "haproxy saw": sorted(states),
    }
    return Result("healthz_busy", passed, figures)
