"""Trades per second through market.trading, against pgbench on the same Postgres server.

    .venv/bin/python bench/trades.py [--seconds 15] [--threads 8] [--terms 20] [--no-redis]
    .venv/bin/python bench/trades.py --orders [1000] [--rounds 2]

Sets up a scratch Django database (dropped and re-created, then migrated), runs ``--threads``
threads of random buys and sells for ``--seconds`` through ``market.trading`` (each sell after
a look at the trader's holding, ``trading.holding``, as the trade box does), checks the
ledger, then runs pgbench's TPC-B-like script with 8 clients on a scratch pgbench database of
the same server, and prints trades/s, latency percentiles, retries, pgbench tps and the ratio.
Both runs happen one after the other, so they do not compete for the machine.

With ``--orders``, trades/s counts the traders' own trades only: each ``trading.buy`` or
``trading.sell`` call that traded, timed to its return, which includes the fill pass its trade
set off (the pass runs in the same call, as in a request). The fills themselves are trades in
the ledger, but counting them would credit the orders with work they add: the question is how
much slower trading gets for traders while orders wait. The fills per second and the ratio
with the fills counted as trades are printed beside it, labelled.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import _harness  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/peerrevenue_bench"


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--terms", type=int, default=20)
    parser.add_argument("--max-shares", type=int, default=10, help="largest trade, in shares")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    parser.add_argument("--pgbench-db", default="peerrevenue_pgbench")
    parser.add_argument("--pgbench-clients", type=int, default=8)
    parser.add_argument("--pgbench-jobs", type=int, default=2)
    parser.add_argument("--pgbench-scale", type=int, default=8)
    parser.add_argument("--pgbench-seconds", type=float, default=None, help="default: --seconds")
    parser.add_argument("--skip-pgbench", action="store_true")
    parser.add_argument(
        "--no-redis", action="store_true", help="the local default: the cache is a database table"
    )
    parser.add_argument(
        "--orders",
        nargs="?",
        type=int,
        const=1_000,
        default=0,
        help="also run with this many limit orders waiting across the terms (default 1,000), "
        "alternating with the same bench without them, and time each fill from its trigger",
    )
    parser.add_argument("--rounds", type=int, default=2, help="with --orders: rounds of each")
    parser.add_argument("--redis-db", type=int, default=11, help="the Redis database it may flush")
    return parser.parse_args()


def server_of(database_url: str) -> str:
    return urlparse(database_url)._replace(path="").geturl()


def setup_django(database_url: str, *, redis: bool = True, redis_db: int = 11) -> None:
    # Production settings (with DEBUG on, Django would also record every query it runs), with
    # Redis, or without it as a local site runs (the cache is then a table in the database).
    env = _harness.production_environment(database_url, redis_db=redis_db)
    if not redis:
        del env["REDIS_URL"]
        os.environ.pop("REDIS_URL", None)
    _harness.setup_django(env)
    from django.core.cache import cache
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)
    cache.clear()


def percentile(sorted_values: list[float], fraction: float) -> float:
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[index]


def make_terms(args: argparse.Namespace, label: str) -> list:
    from market.models import Term

    return [
        Term.objects.create(phrase=f"bench term {label} {i}", p0=100_000, k=1_000)
        for i in range(args.terms)
    ]


def place_orders(terms: list, count: int) -> int:
    """``count`` limit orders across ``terms``, from makers who hold shares to sell: buys below
    and sells above each price, 1 to 80 price steps away, so random trades reach some."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from market import trading

    per_maker = settings.MARKET_MAX_OPEN_ORDERS
    rng = random.Random(11)
    makers = [
        get_user_model().objects.create_user(f"maker-{uuid.uuid4().hex[:8]}")
        for _ in range(-(-count // per_maker))
    ]
    for maker in makers:
        for term in terms:
            trading.buy(user=maker, term=term, shares=5, max_cost=None, key=uuid.uuid4().hex)
    placed = 0
    while placed < count:
        maker = makers[placed // per_maker]
        term = terms[placed % len(terms)]
        term.refresh_from_db()
        step = rng.randint(1, 80) * term.k
        side = "buy" if placed % 2 else "sell"
        trading.place_order(
            user=maker,
            term=term,
            side=side,
            shares=rng.randint(1, 5),
            limit_price=term.price - step if side == "buy" else term.price + step,
            key=uuid.uuid4().hex,
        )
        placed += 1
    return placed


def fill_latencies(since) -> list[float]:
    """Seconds from each fill's trigger (the trade whose commit made it reachable, or the
    order's own placement) to the fill's trade, both by the database's clock."""
    from market.models import OrderFill

    return sorted(
        (fill.trade.created_at - fill.triggered_at).total_seconds()
        for fill in OrderFill.objects.filter(trade__created_at__gte=since).select_related("trade")
        if fill.triggered_at is not None
    )


def run_trades(args: argparse.Namespace, terms: list | None = None, label: str = "") -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from market import trading
    from market.ledger import check_ledger

    User = get_user_model()
    users = [User.objects.create_user(f"bench-{label}{i}") for i in range(args.threads)]
    terms = terms if terms is not None else make_terms(args, label or "plain")
    barrier = threading.Barrier(args.threads + 1)
    stop_at: list[float] = [0.0]
    latencies: list[list[float]] = [[] for _ in range(args.threads)]
    refused = [0] * args.threads

    def worker(index: int) -> None:
        rng = random.Random(index)
        user = users[index]
        held = dict.fromkeys((term.pk for term in terms), 0)
        mine = latencies[index]
        try:
            barrier.wait()
            while time.perf_counter() < stop_at[0]:
                term = rng.choice(terms)
                started = time.perf_counter()
                try:
                    selling = rng.random() < 0.5
                    if selling:
                        held[term.pk] = trading.holding(user, term)
                    if selling and held[term.pk]:
                        shares = rng.randint(1, min(held[term.pk], args.max_shares))
                        trading.sell(
                            user=user,
                            term=term,
                            shares=shares,
                            min_proceeds=None,
                            key=uuid.uuid4().hex,
                        )
                        held[term.pk] -= shares
                    else:
                        shares = rng.randint(1, args.max_shares)
                        trading.buy(
                            user=user,
                            term=term,
                            shares=shares,
                            max_cost=None,
                            key=uuid.uuid4().hex,
                        )
                        held[term.pk] += shares
                except trading.TradeError:
                    refused[index] += 1
                    continue
                mine.append(time.perf_counter() - started)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.threads)]
    for thread in threads:
        thread.start()
    retries_before = trading.retry_count()
    stop_at[0] = time.perf_counter() + args.seconds
    started = time.perf_counter()
    barrier.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    everything = sorted(value for values in latencies for value in values)
    report = check_ledger()
    return {
        "trades": len(everything),
        "seconds": elapsed,
        "trades_per_second": len(everything) / elapsed,
        "p50_ms": percentile(everything, 0.50) * 1000,
        "p99_ms": percentile(everything, 0.99) * 1000,
        "refused": sum(refused),
        "retries": trading.retry_count() - retries_before,
        "ledger": report.text().splitlines()[0],
        "ledger_ok": report.ok,
    }


def run_pgbench(args: argparse.Namespace) -> float:
    _harness.scratch_database(args.pgbench_db, server=server_of(args.database_url))
    server = urlparse(args.database_url)
    env = dict(os.environ, PGHOST=server.hostname or "127.0.0.1", PGPORT=str(server.port or 5432))
    if server.username:
        env["PGUSER"] = server.username
    if server.password:
        env["PGPASSWORD"] = server.password
    subprocess.run(
        ["pgbench", "-i", "-q", "-s", str(args.pgbench_scale), args.pgbench_db],
        env=env,
        check=True,
        capture_output=True,
    )
    seconds = args.pgbench_seconds if args.pgbench_seconds is not None else args.seconds
    result = subprocess.run(
        [
            "pgbench",
            "-c",
            str(args.pgbench_clients),
            "-j",
            str(args.pgbench_jobs),
            "-T",
            str(max(1, round(seconds))),
            args.pgbench_db,
        ],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    found = re.search(r"tps = ([\d.]+) \(without initial connection time\)", result.stdout)
    if not found:
        raise RuntimeError(f"could not read pgbench's tps from:\n{result.stdout}")
    return float(found.group(1))


def run_with_orders(args: argparse.Namespace) -> int:
    """The same bench with and without waiting orders, alternating round by round in one run
    (the machine is shared: both sides meet the same load)."""
    from django.utils import timezone

    from market.models import Order

    sides: dict[str, list[dict]] = {"none": [], "orders": []}
    latencies: list[float] = []
    for round_ in range(args.rounds):
        for side in ("none", "orders"):
            terms = make_terms(args, f"{side}{round_}")
            if side == "orders":
                place_orders(terms, args.orders)
                waiting = Order.objects.filter(term__in=terms, state="open").count()
            started = timezone.now()
            result = run_trades(args, terms=terms, label=f"{side}{round_}-")
            if side == "orders":
                result["waiting_before"] = waiting
                result["filled"] = len(fill_latencies(started))
                latencies += fill_latencies(started)
            sides[side].append(result)
            print(
                f"round {round_ + 1} {side:>6}: {result['trades_per_second']:.0f} trades/s, "
                f"p99 {result['p99_ms']:.1f} ms"
                + (
                    f", {result['waiting_before']:,} orders waiting, {result['filled']:,} fills"
                    if side == "orders"
                    else ""
                )
                + f"; {result['ledger']}"
            )
    none = sum(r["trades_per_second"] for r in sides["none"]) / args.rounds
    with_orders = sum(r["trades_per_second"] for r in sides["orders"]) / args.rounds
    fills_per_second = sum(r["filled"] / r["seconds"] for r in sides["orders"]) / args.rounds
    ratio = with_orders / none
    p99 = percentile(sorted(latencies), 0.99) * 1000
    p50 = percentile(sorted(latencies), 0.50) * 1000
    ok = all(r["ledger_ok"] for rs in sides.values() for r in rs)
    verdict = "PASS" if ratio >= 0.8 and p99 <= 100 and ok else "FAIL"
    print(
        f"summary: {args.orders:,} orders across {args.terms} terms, {args.threads} threads: "
        f"{with_orders:,.0f} trades/s vs {none:,.0f} without orders, ratio {ratio:.2f} "
        f"(goal >= 0.8); trigger to fill p50 {p50:.1f} ms, p99 {p99:.1f} ms over "
        f"{len(latencies):,} fills (goal <= 100 ms); ledger {'OK' if ok else 'FAILED'} {verdict}"
    )
    print(
        f"  (trades/s counts the traders' trades only; the fills added {fills_per_second:,.0f} "
        f"trades/s more, {(with_orders + fills_per_second) / none:.2f} of the order-free rate "
        "if counted)"
    )
    return 0 if ok else 1


def main() -> int:
    args = parse_args()
    name = urlparse(args.database_url).path.lstrip("/")
    setup_django(
        _harness.scratch_database(name, server=server_of(args.database_url)),
        redis=not args.no_redis,
        redis_db=args.redis_db,
    )
    if args.orders:
        return run_with_orders(args)
    trades = run_trades(args)
    print(f"market.trading: {args.threads} threads, {args.terms} terms, {args.seconds:g} s")
    print(f"  trades/s      {trades['trades_per_second']:.0f}  ({trades['trades']:,} trades)")
    print(f"  latency       p50 {trades['p50_ms']:.2f} ms, p99 {trades['p99_ms']:.2f} ms")
    print(f"  retries       {trades['retries']}   refused {trades['refused']}")
    print(f"  {trades['ledger']}")
    if args.skip_pgbench:
        return 0 if trades["ledger_ok"] else 1
    tps = run_pgbench(args)
    print(
        f"pgbench tpcb-like: {args.pgbench_clients} clients, {args.pgbench_jobs} jobs, scale "
        f"{args.pgbench_scale}"
    )
    print(f"  tps           {tps:.0f}")
    ratio = trades["trades_per_second"] / tps
    goal = 0.3 if args.no_redis else 0.4
    print(f"ratio trades/s ÷ pgbench tps = {ratio:.2f} (goal ≥ {goal})")
    verdict = "PASS" if ratio >= goal and trades["ledger_ok"] else "FAIL"
    print(
        f"summary: trades {trades['trades_per_second']:,.0f}/s (p50 {trades['p50_ms']:.1f} ms, "
        f"p99 {trades['p99_ms']:.1f} ms) vs pgbench {tps:,.0f} tps, ratio {ratio:.2f} "
        f"(goal >= {goal}, {'no Redis' if args.no_redis else 'Redis'}) {verdict}"
    )
    return 0 if trades["ledger_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
