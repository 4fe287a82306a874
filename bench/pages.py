#!/usr/bin/env python
"""Page throughput: Django under gunicorn against a trivial app serving the same bytes.

Builds a scratch Postgres database with a week of cs.DC listings (about 100 papers) and 200
listed terms, serves the site with gunicorn (2 workers, DJANGO_DEBUG=0, Redis cache), loads
one page with wrk, then does the same against a WSGI app that returns the identical response
bytes under the same gunicorn settings, alternating the two for a few rounds and comparing
medians. Then renders the page 1,000 times in this process with the page cache off and prints
the p50 and p99 of one render.

    --signed-in   requests carry a trader's real session and CSRF cookies (holdings, watches)
                  (not the shared page cache: each worker keeps the reader's own whole page,
                  peerrevenue.reader_frames.page, while the facts and fillers hold)
    --cold        the page cache is off (PAGE_CACHE_SECONDS=0) in the served site
    --page        list (/list/cs.DC/<date>/, 30 papers), market (/market/), term
                  (/market/<slug>/), or rules (/market/rules/, text and a worked example,
                  nothing read but the session and the reader): the floor of a signed-in page
    --live        while both sides are measured, a busy market trades 20 times a second through
                  market.trading (random buys and sells of the listed terms, the page's own term
                  among them) and a reader toggles a watch of cs.DC once a second through the
                  real view, over HTTP

Goals: cached anonymous >= 0.5, cold anonymous >= 0.15, signed-in >= 0.15, and live signed-in
>= 0.25 on each page; the first render after a change <= 5 ms (p50) in-process on each page;
with --floors, signed in, >= 0.8 of the facts floor (measured right after the page, each round).

The in-process renders: warm (nothing changed), right after a change the page shows (list: a
paper on it edited with QuerySet.update(); market: a trade; term: a trade of its term), and
with nothing kept at all (this process's memory and the shared cache emptied).

    .venv/bin/python bench/pages.py [--signed-in] [--cold] [--page list] [--seconds 10]
        [--connections 16] [--rounds 3] [--renders 1000]
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (  # noqa: E402
    free_port,
    like_a_worker,
    production_environment,
    require,
    scratch_database,
    setup_django,
    start_gunicorn,
    stop,
    timed_gets,
    wait_for,
)
from feedgen import rss  # noqa: E402

WEEK = [dt.date(2026, 11, 23) + dt.timedelta(days=n) for n in range(5)]  # Monday to Friday
PAPERS_PER_DAY = 20
TERMS = 200
TRADER = "bench-trader"
HELD_TERMS = 12  # the trader holds shares in this many terms (marks on the term pages)
GOALS = {(False, False): 0.5, (False, True): 0.15, (True, False): 0.15, (True, True): 0.15}
LIVE_GOAL = 0.25  # signed-in, while the market trades
FACTS_GOAL = 0.8  # signed-in, of Django's floor with the session, the reader and the facts
TRADES_PER_SECOND = 20
WATCHER = "bench-watcher"
RENDER_GOAL_MS = 5.0
# Django itself serving the same bytes (bench/django_floor.py), for --floors.
FLOORS = {
    "bare": "no middleware",
    "reader": "sessions and auth only, reading the reader",
    "facts": "as reader, and the every-page facts (read with the session, as the site does)",
    "stack": "the site's whole middleware, the same view",
}


def seed() -> None:
    from django.core.management import call_command

    from market.models import Term
    from papers.ingest import ingest_category
    from papers.models import Category

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    call_command("load_starter_terms", verbosity=0)
    extra = TERMS - Term.objects.count()
    Term.objects.bulk_create(
        Term(phrase=f"benchmark term {n}", slug=f"benchmark-term-{n}") for n in range(extra)
    )
    category = Category.objects.get(code="cs.DC")
    with tempfile.TemporaryDirectory() as folder:
        for number, day in enumerate(WEEK):
            path = Path(folder) / f"{day}.rss"
            path.write_bytes(
                rss(date=day, items=PAPERS_PER_DAY, seed=number, first_number=1 + number * 1000)
            )
            ingest_category(category=category, file=path, enrich=False)


def wrk(url: str, *, seconds: int, connections: int, cookie: str | None) -> float:
    headers = ["-H", f"Cookie: {cookie}"] if cookie else []
    output = subprocess.run(
        ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", *headers, url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        sys.exit(f"{url} answered {errors.group(1)} errors under load:\n{output}")
    rate = re.search(r"Requests/sec:\s+([\d.]+)", output)
    if rate is None:
        sys.exit(f"No request rate in wrk's report:\n{output}")
    return float(rate.group(1))


def make_trader():
    """A trader who holds shares in a dozen terms and watches cs.DC."""
    from django.contrib.auth import get_user_model

    from market import trading
    from market.models import Term
    from papers.models import Category

    user = get_user_model().objects.create_user(TRADER, f"{TRADER}@example.org", "x" * 20)
    for number, term in enumerate(Term.objects.listed().order_by("pk")[:HELD_TERMS]):
        trading.buy(user=user, term=term, shares=number + 1, max_cost=None, key=f"bench-{number}")
    Category.objects.get(code="cs.DC").toggle_watch(user)
    return user


def page_path(page: str) -> str:
    from market.models import Term

    if page == "market":
        return "/market/"
    if page == "rules":
        return "/market/rules/"
    if page == "term":
        term = Term.objects.listed().order_by("pk").first()
        if term is None:
            sys.exit("No listed term to load the term page of.")
        return term.get_absolute_url()
    return f"/list/cs.DC/{WEEK[-1]}/"


def signed_in_client(user):
    """A test client with a real session (stored where the site keeps sessions)."""
    from django.test import Client

    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(user)
    return client


def renders(client, path: str, *, count: int, before_each=None) -> list[float]:
    """Milliseconds for each of ``count`` renders of ``path`` through the whole middleware stack,
    with the page cache off (the first render, which warms the process, is not counted).
    ``before_each()``, if given, runs before each render and is not timed (a change)."""
    from django.conf import settings

    settings.PAGE_CACHE_SECONDS = 0
    assert client.get(path).status_code == 200
    return sorted(timed_gets(client, path, count, before_each))


def change_for(page: str, trader):
    """What the first reader after a change of this page pays for: a change the page shows."""
    import itertools

    from market import trading
    from market.models import Term
    from papers.models import Listing, Paper

    numbers = itertools.count()
    if page == "list":
        listing = Listing.objects.filter(date=WEEK[-1]).order_by("paper__arxiv_id")[0]

        def edit_a_paper() -> None:
            comment = f"{next(numbers)} pages"
            Paper.objects.filter(pk=listing.paper_id).update(comment=comment)

        return edit_a_paper
    term = Term.objects.listed().order_by("pk")[0]

    def trade() -> None:
        trading.buy(user=trader, term=term, shares=1, max_cost=None, key=f"c-{next(numbers)}")

    return trade


def nothing_kept() -> None:
    from django.core.cache import cache

    from peerrevenue import keep

    cache.clear()
    keep.forget_local()


class LiveWrites:
    """The writes of a live site, in threads of this process, until ``stop()``: trades through
    market.trading at ``TRADES_PER_SECOND`` and one watch toggle a second through the view."""

    def __init__(self, *, site_url: str, watcher_cookie: str, csrf: str) -> None:
        import threading

        self.site_url = site_url
        self.watcher_cookie = watcher_cookie
        self.csrf = csrf
        self.stopping = threading.Event()
        self.trades = 0
        self.toggles = 0
        self.threads = [
            threading.Thread(target=self._trade, daemon=True),
            threading.Thread(target=self._watch, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _trade(self) -> None:
        import random

        from django.contrib.auth import get_user_model
        from django.db import connection

        from market import trading
        from market.models import Term

        rng = random.Random(7)
        users = list(get_user_model().objects.filter(username__startswith="bench-market-"))
        terms = list(Term.objects.listed().order_by("pk")[:40])
        interval = 1 / TRADES_PER_SECOND
        due = time.monotonic()
        while not self.stopping.is_set():
            user, term = rng.choice(users), rng.choice(terms)
            key = f"live-{self.trades}-{rng.random()}"
            try:
                # A mix that checks a holding before each sell, as a trader's "Sell" would.
                if rng.random() < 0.4 and trading.holding(user, term) > 0:
                    trading.sell(user=user, term=term, shares=1, min_proceeds=None, key=key)
                else:
                    trading.buy(user=user, term=term, shares=1, max_cost=None, key=key)
                self.trades += 1
            except trading.TradeError:
                pass
            due += interval
            self.stopping.wait(max(0.0, due - time.monotonic()))
        connection.close()

    def _watch(self) -> None:
        request = urllib.request.Request(
            f"{self.site_url}/list/cs.DC/watch/",
            data=b"",
            method="POST",
            headers={
                "Cookie": self.watcher_cookie,
                "X-CSRFToken": self.csrf,
                "Referer": self.site_url + "/list/cs.DC/",
            },
        )
        opener = urllib.request.build_opener(_NoRedirects)
        while not self.stopping.wait(1.0):
            try:
                opener.open(request).read()
            except urllib.error.HTTPError as error:  # the redirect back to the category
                if error.code != 302:
                    raise
            self.toggles += 1

    def stop(self) -> None:
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=10)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def market_traders(count: int = 20) -> None:
    from django.contrib.auth import get_user_model

    for n in range(count):
        get_user_model().objects.create_user(f"bench-market-{n}", f"m{n}@example.org", "x" * 20)


def watcher_cookies() -> tuple[str, str]:
    """A second reader's session and CSRF cookies, as their browser would send them."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(WATCHER, f"{WATCHER}@example.org", "x" * 20)
    client = signed_in_client(user)
    assert client.get("/list/cs.DC/").status_code == 200
    csrf = client.cookies[settings.CSRF_COOKIE_NAME].value
    return "; ".join(f"{name}={m.value}" for name, m in client.cookies.items()), csrf


def percentiles(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--signed-in", action="store_true", help="as a trader with a session")
    parser.add_argument("--cold", action="store_true", help="with the page cache off")
    parser.add_argument("--page", choices=["list", "market", "term", "rules"], default="list")
    parser.add_argument("--live", action="store_true", help="measure while the market trades")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--renders", type=int, default=1000)
    parser.add_argument("--port", type=int, default=0, help="first of two ports (default: any)")
    parser.add_argument("--database", default="peerrevenue_bench_pages", help="scratch db name")
    parser.add_argument("--redis-db", type=int, default=14, help="Redis database (flushed)")
    parser.add_argument(
        "--floors",
        action="store_true",
        help="also measure Django's own floors serving the same bytes (bench/django_floor.py)",
    )
    args = parser.parse_args()
    require("wrk", "apt-get install -y wrk")

    env = production_environment(scratch_database(args.database), redis_db=args.redis_db)
    # The watcher toggles once a second for as long as the rounds last (several minutes with
    # --floors): more than a reader's limit, which this benchmark is not about.
    env["RATELIMIT_WATCHES_PER_WINDOW"] = "100000"
    if args.cold:
        env["PAGE_CACHE_SECONDS"] = "0"
    setup_django(env)
    print("Seeding a week of listings and 200 terms…", flush=True)
    seed()
    trader = make_trader()
    market_traders()
    watcher_cookie, csrf = watcher_cookies()
    from django.conf import settings
    from django.core.cache import cache

    cache.clear()
    from papers.models import Listing

    papers = Listing.objects.count()
    path = page_path(args.page)
    client = signed_in_client(trader) if args.signed_in else None
    cookie = None
    if client is not None:
        # What a signed-in browser sends after its first page: the session and the CSRF
        # cookie (without the latter every response would set a new one).
        assert client.get(path).status_code == 200
        assert settings.CSRF_COOKIE_NAME in client.cookies
        cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())

    site_port = args.port or free_port()
    # Warmed, as in production: unwarmed, a worker's first request imports scikit-learn (the
    # site's URLconf reaches the recommender), seconds of the first round on a busy machine.
    site = start_gunicorn("peerrevenue.wsgi", port=site_port, env=env, warmed=True)
    trivial = None
    floors: list[subprocess.Popen] = []
    body_file = tempfile.NamedTemporaryFile(suffix=".html")  # noqa: SIM115 - closed below
    try:
        site_url = f"http://127.0.0.1:{site_port}{path}"
        wait_for(site_url)
        request = urllib.request.Request(site_url, headers={"Cookie": cookie} if cookie else {})
        with urllib.request.urlopen(request) as response:
            body = response.read()
            content_type = response.headers["Content-Type"]
        if cookie and TRADER.encode() not in body:
            sys.exit("The signed-in page does not show the trader: the session cookie failed.")
        body_file.write(body)
        body_file.flush()
        trivial_port = args.port + 1 if args.port else free_port()
        trivial = start_gunicorn(
            "static_app:app",
            port=trivial_port,
            env=env
            | {
                "BENCH_BODY_FILE": body_file.name,
                "BENCH_CONTENT_TYPE": content_type,
                "PYTHONPATH": str(Path(__file__).resolve().parent),
            },
        )
        trivial_url = f"http://127.0.0.1:{trivial_port}/"
        wait_for(trivial_url)
        floor_urls = {}
        if args.floors:
            for floor in FLOORS:
                port = free_port()
                floors.append(
                    start_gunicorn(
                        "peerrevenue.wsgi",
                        port=port,
                        warmed=True,
                        env=env
                        | {
                            "DJANGO_SETTINGS_MODULE": "django_floor",
                            "BENCH_FLOOR": floor,
                            "BENCH_BODY_FILE": body_file.name,
                            "BENCH_CONTENT_TYPE": content_type,
                            "PYTHONPATH": str(Path(__file__).resolve().parent),
                        },
                    )
                )
                floor_urls[floor] = f"http://127.0.0.1:{port}{path}"
                wait_for(floor_urls[floor])
            if cookie:
                reader = urllib.request.Request(floor_urls["reader"], headers={"Cookie": cookie})
                with urllib.request.urlopen(reader) as response:
                    if response.headers["X-Reader"] != TRADER:
                        sys.exit("Django's reader floor did not sign the trader in.")
        writes = None
        if args.live:
            writes = LiveWrites(
                site_url=f"http://127.0.0.1:{site_port}", watcher_cookie=watcher_cookie, csrf=csrf
            )
        # Alternate the two, several rounds, and keep the medians: the machine's other load
        # then weighs on both sides alike.
        django_rates, trivial_rates = [], []
        floor_rates: dict[str, list[float]] = {floor: [] for floor in floor_urls}
        load = {"seconds": args.seconds, "connections": args.connections}
        started = time.monotonic()
        for _ in range(args.rounds):
            django_rates.append(wrk(site_url, cookie=cookie, **load))
            # The floor the signed-in goal is set against right beside the page, the rest after.
            for floor, url in sorted(floor_urls.items(), key=lambda item: item[0] != "facts"):
                floor_rates[floor].append(wrk(url, cookie=cookie, **load))
                if floor == "facts":
                    trivial_rates.append(wrk(trivial_url, cookie=cookie, **load))
            if "facts" not in floor_urls:
                trivial_rates.append(wrk(trivial_url, cookie=cookie, **load))
        if writes is not None:
            writes.stop()
            elapsed = time.monotonic() - started
            print(
                f"writes while measuring: {writes.trades:,} trades "
                f"({writes.trades / elapsed:.1f}/s), {writes.toggles:,} watch toggles "
                f"({writes.toggles / elapsed:.2f}/s)"
            )
    finally:
        stop(site)
        if trivial is not None:
            stop(trivial)
        for process in floors:
            stop(process)
        body_file.close()
    from django.test import Client

    render_client = client or Client(HTTP_HOST="127.0.0.1")
    like_a_worker()
    times = renders(render_client, path, count=args.renders)
    p50, p99 = percentiles(times)
    some = max(1, args.renders // 10)
    changed = renders(render_client, path, count=some, before_each=change_for(args.page, trader))
    changed_p50, changed_p99 = percentiles(changed)
    bare = renders(render_client, path, count=some, before_each=nothing_kept)
    bare_p50, bare_p99 = percentiles(bare)

    django_rate = statistics.median(django_rates)
    trivial_rate = statistics.median(trivial_rates)
    mode = ("signed-in" if args.signed_in else "anonymous") + (
        ", page cache off" if args.cold else ("" if args.signed_in else ", page cache on")
    )
    goal = LIVE_GOAL if args.live and args.signed_in else GOALS[args.signed_in, args.cold]
    if args.live:
        mode += f", live ({TRADES_PER_SECOND} trades/s and a watch toggle/s)"
    print(
        "rounds (Django / trivial): "
        + ", ".join(
            f"{d:,.0f} / {t:,.0f}" for d, t in zip(django_rates, trivial_rates, strict=True)
        )
    )
    ratio = django_rate / trivial_rate
    for floor, rates in floor_rates.items():
        rate = statistics.median(rates)
        print(
            f"Django's floor, {FLOORS[floor]}: {rate:,.0f} requests/s (median; rounds "
            + ", ".join(f"{r:,.0f}" for r in rates)
            + f"), {rate / trivial_rate:.2f} of the trivial app's"
        )
    if "facts" in floor_rates:
        ratios = [d / f for d, f in zip(django_rates, floor_rates["facts"], strict=True)]
        print(
            "the page over the facts floor, measured one after the other: "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + f" (median {statistics.median(ratios):.2f}; goal signed in >= {FACTS_GOAL})"
        )
    print(f"listings in database:        {papers}")
    print(f"page:                        {path} ({len(body):,} bytes), {mode}")
    print(f"Django (gunicorn, 2 workers): {django_rate:,.0f} requests/s (median)")
    print(f"trivial WSGI app, same bytes: {trivial_rate:,.0f} requests/s (median)")
    who = "signed-in" if args.signed_in else "anonymous"
    print(
        f"in-process render ({who}, page cache off), {len(times):,} renders: "
        f"p50 {p50:.2f} ms, p99 {p99:.2f} ms"
    )
    print(
        f"in-process render right after a change it shows, {len(changed):,} renders: "
        f"p50 {changed_p50:.2f} ms, p99 {changed_p99:.2f} ms"
    )
    print(
        f"in-process render with nothing kept at all, {len(bare):,} renders: "
        f"p50 {bare_p50:.2f} ms, p99 {bare_p99:.2f} ms"
    )
    passed = ratio >= goal and changed_p50 <= RENDER_GOAL_MS
    print(
        f"summary: {path} {mode}: {django_rate:,.0f} req/s vs trivial {trivial_rate:,.0f} req/s, "
        f"ratio {ratio:.2f} (goal >= {goal}); render p50 {p50:.2f} ms, after a change "
        f"{changed_p50:.2f} ms (goal <= {RENDER_GOAL_MS:g} ms), nothing kept {bare_p50:.2f} ms "
        f"{'PASS' if passed else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
