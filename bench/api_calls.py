"""The API against the web, in one run, while the market trades.

    .venv/bin/python bench/api_calls.py [--requests 300] [--trades-per-second 20] [--no-redis]

Sets up a scratch database (dropped and re-created, then migrated; the cache in Redis as in
production, or with ``--no-redis`` in a table of the database as on a local site), a category
with a day of 30 listed papers and 20 terms, then, while a background thread trades at
``--trades-per-second`` through ``market.trading``, measures in this process (Django's test
client, the whole middleware):

- the day's listing: ``GET /api/v1/categories/cs.DC/days/DAY`` warm, against the web's page of
  the same day ``/list/cs.DC/DAY/`` warm, and the API's 304 for a poller holding the ETag;
- a trade: ``POST /api/v1/terms/SLUG/trades`` with a token, against the web's confirm
  ``POST /market/SLUG/trade/`` of a signed-in trader: the same buy through the same function.

Rounds alternate API and web so both meet the same background load; each side's p50 and p95
are printed, and the ratio web p50 / API p50 (above 1: the API is faster).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from _harness import (  # noqa: E402
    scratch_database,
    setup_offline_django,
    setup_redis_django,
)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300, help="per side and measure")
    parser.add_argument("--trades-per-second", type=float, default=20)
    parser.add_argument("--database", default="pr_api_bench")
    parser.add_argument("--redis-db", type=int, default=7)
    parser.add_argument("--no-redis", action="store_true")
    return parser.parse_args()


def summary(values: list[float]) -> str:
    q = statistics.quantiles(sorted(values), n=100, method="inclusive")
    return f"p50 {q[49]:.2f} ms, p95 {q[94]:.2f} ms"


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    options = parse_args()
    url = scratch_database(options.database)
    if options.no_redis:
        setup_offline_django(url)
    else:
        setup_redis_django(url, redis_db=options.redis_db)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from api.tokens import make_token
    from market import trading
    from market.models import Term
    from papers.models import Category, Listing
    from tests.factories import make_paper

    settings.API_REQUESTS_PER_TOKEN = settings.API_REQUESTS_PER_ADDRESS = 10**9
    settings.RATELIMIT_TRADES_PER_WINDOW = 10**9
    category, _ = Category.objects.get_or_create(
        code="cs.DC", defaults={"name": "Distributed Computing", "archive_code": "cs"}
    )
    day = dt.date(2026, 11, 3)
    for n in range(30):
        paper = make_paper(arxiv_id=f"2611.{n + 1:05d}", title=f"Consensus and KV cache {n}")
        Listing.objects.create(category=category, paper=paper, date=day, announce_type="new")
    terms = [Term.objects.create(phrase=f"term {n}", slug=f"term-{n}") for n in range(20)]
    users = get_user_model().objects
    api_trader = users.create_user("api-trader")
    web_trader = users.create_user("web-trader")
    market = [users.create_user(f"market-{n}") for n in range(4)]
    secret = make_token(user=api_trader, name="bench", scopes=["trade"]).secret
    api = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
    anonymous = Client()
    web = Client()
    web.force_login(web_trader)

    stop = threading.Event()
    background = {"trades": 0}

    def trade_in_background() -> None:
        pause = 1 / options.trades_per_second
        n = 0
        while not stop.is_set():
            n += 1
            trading.buy(
                user=market[n % 4],
                term=terms[n % 20],
                shares=1,
                max_cost=None,
                key=uuid.uuid4().hex,
            )
            background["trades"] += 1
            time.sleep(pause)
        connection.close()

    thread = threading.Thread(target=trade_in_background)
    thread.start()
    started = time.monotonic()
    try:
        listing_api, listing_web, listing_304 = [], [], []
        api_url, web_url = f"/api/v1/categories/cs.DC/days/{day}", f"/list/cs.DC/{day}/"
        first = anonymous.get(api_url)
        assert first.status_code == 200, first.content[:300]
        assert anonymous.get(web_url).status_code == 200
        etag = first["ETag"]
        for _ in range(options.requests):
            listing_api.append(timed(lambda: anonymous.get(api_url)))
            listing_web.append(timed(lambda: anonymous.get(web_url)))
            listing_304.append(timed(lambda: anonymous.get(api_url, HTTP_IF_NONE_MATCH=etag)))
        trade_api, trade_web = [], []
        body = json.dumps({"side": "buy", "shares": 1})
        for n in range(options.requests):
            slug = terms[n % 20].slug

            def by_api(slug: str = slug) -> None:
                answer = api.post(
                    f"/api/v1/terms/{slug}/trades",
                    body,
                    content_type="application/json",
                    HTTP_IDEMPOTENCY_KEY=uuid.uuid4().hex,
                )
                assert answer.status_code == 201, answer.content[:300]

            def by_web(slug: str = slug) -> None:
                answer = web.post(
                    f"/market/{slug}/trade/",
                    {"side": "buy", "shares": "1", "limit": str(10**12), "key": uuid.uuid4().hex},
                )
                assert answer.status_code == 302, answer.content[:300]

            trade_api.append(timed(by_api))
            trade_web.append(timed(by_web))
    finally:
        stop.set()
        thread.join()
    seconds = time.monotonic() - started
    rate = background["trades"] / seconds
    print(f"background: {background['trades']} trades in {seconds:.0f} s ({rate:.1f}/s)")
    print(f"listing, API warm:    {summary(listing_api)}")
    print(f"listing, web warm:    {summary(listing_web)}")
    print(f"listing, API 304:     {summary(listing_304)}")
    print(f"trade, API:           {summary(trade_api)}")
    print(f"trade, web:           {summary(trade_web)}")
    ratio_listing = statistics.median(listing_web) / statistics.median(listing_api)
    ratio_trade = statistics.median(trade_web) / statistics.median(trade_api)
    print(
        f"summary: listing web/API p50 {ratio_listing:.2f}, trade web/API p50 "
        f"{ratio_trade:.2f}, {rate:.1f} background trades/s"
    )


if __name__ == "__main__":
    main()
