#!/usr/bin/env python
"""The day's dividend run with holders: what the dividend rule costs, one tree against another.

A scratch database with 300 listed terms, 200 traders and 6,000 trades spread over the ten days
before the announcement (some inside the papers' submission windows), and one listing day of
2,000 papers that mention 1–4 terms each, half with a submission time (as the API enriches
them) and half without (the feed alone). Then ``pay_dividends_for_day`` is timed: the matcher,
the mentions, the payouts. Only public APIs that every version has are used, so the same
scenario runs on an older checkout.

    .venv/bin/python bench/dividends.py --before /work/wt-before2 [--rounds 3]

runs the scenario in the ``--before`` tree and in this one, alternately, each in a process of
its own on a fresh database, and prints both sides of each round and their medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import ROOT, production_environment, scratch_database  # noqa: E402

SEED = 40


def measure(tree: Path, *, papers: int, terms: int, traders: int, trades: int) -> dict:
    """Build the scenario with the code of ``tree`` and time its dividend run."""
    import datetime as dt
    import random
    from zoneinfo import ZoneInfo

    env = production_environment(scratch_database("peerrevenue_bench_dividends"), redis_db=13)
    env["REDIS_URL"] = ""
    os.environ.update(env)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)

    from market import trading
    from market.dividends import pay_dividends_for_day
    from market.models import DividendEvent, Term, Trade
    from papers.models import Category, Listing, Paper

    ny = ZoneInfo("America/New_York")
    day = dt.date(2026, 11, 25)  # announced Tuesday 24 November, 20:00 New York
    announced = dt.datetime(2026, 11, 24, 20, 0, tzinfo=ny)
    rng = random.Random(SEED)

    phrases = [f"bench term {n}" for n in range(terms)]
    Term.objects.bulk_create(
        [Term(phrase=p, slug=p.replace(" ", "-"), p0=100_000, k=1_000) for p in phrases]
    )
    Term.objects.update(listed_at=dt.datetime(2026, 11, 1, tzinfo=ny))
    term_rows = list(Term.objects.order_by("pk"))
    users = [get_user_model().objects.create_user(f"bench{n}") for n in range(traders)]
    made: list[tuple[int, dt.datetime]] = []
    for n in range(trades):
        user = users[n % traders]
        term = term_rows[rng.randrange(len(term_rows))]
        trade = trading.buy(
            user=user, term=term, shares=rng.randint(1, 20), max_cost=None, key=f"b{n}"
        )
        made.append((trade.pk, announced - dt.timedelta(seconds=rng.randrange(10 * 86_400))))
    # Dated over the ten days before the announcement, in the order they were made.
    made.sort()
    instants = sorted(at for _, at in made)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Trade._meta.db_table} AS t SET created_at = d.at "
            "FROM unnest(%s::bigint[], %s::timestamptz[]) AS d(id, at) WHERE t.id = d.id",
            [[pk for pk, _ in made], instants],
        )

    category = Category.objects.get(code="cs.DC")
    period_opens = dt.datetime(2026, 11, 23, 14, 0, tzinfo=ny)
    rows = []
    for n in range(papers):
        named = rng.sample(phrases, rng.randint(1, 4))
        rows.append(
            Paper(
                arxiv_id=f"2611.{n + 1:05d}",
                title=f"On {named[0]}",
                abstract=" ".join(f"We study {p} and its uses." for p in named[1:]) or "Results.",
                primary_category="cs.DC",
                categories=["cs.DC"],
                authors=[{"name": "A. Author", "name_text": "A. Author", "affiliation": ""}],
                authors_text="A. Author",
                submitted_at=(
                    period_opens + dt.timedelta(seconds=rng.randrange(86_400)) if n % 2 else None
                ),
            )
        )
    Paper.objects.bulk_create(rows)
    Listing.objects.bulk_create(
        [
            Listing(category=category, paper=paper, date=day, announce_type="new")
            for paper in Paper.objects.all()
        ]
    )

    statements = 0

    def count(execute, sql, params, many, context):
        nonlocal statements
        statements += 1
        return execute(sql, params, many, context)

    started = time.perf_counter()
    with connection.execute_wrapper(count):
        summary = pay_dividends_for_day(category=category, date=day)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "statements": statements,
        "mentions": summary.mentions,
        "amount": summary.amount,
        "events": DividendEvent.objects.count(),
        "paid": DividendEvent.objects.filter(shares__gt=0).count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="the checkout to compare with (e.g. main)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--papers", type=int, default=2000)
    parser.add_argument("--terms", type=int, default=300)
    parser.add_argument("--traders", type=int, default=200)
    parser.add_argument("--trades", type=int, default=6000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # one side, in-process
    args = parser.parse_args()
    sizes = {k: getattr(args, k) for k in ("papers", "terms", "traders", "trades")}
    if args.measure:
        print(json.dumps(measure(args.measure, **sizes)))
        return
    sides = [("before", args.before), ("after", ROOT)] if args.before else [("after", ROOT)]
    results: dict[str, list[dict]] = {name: [] for name, _ in sides}
    for round_number in range(1, args.rounds + 1):
        for name, tree in sides:
            command = [sys.executable, __file__, "--measure", str(tree)]
            command += [f"--{k}={v}" for k, v in sizes.items()]
            out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            results[name].append(result)
            print(
                f"round {round_number} {name:<6} ({tree}): {result['seconds'] * 1000:,.0f} ms, "
                f"{result['statements']:,} statements, "
                f"{result['mentions']:,} mentions, {result['paid']:,} of {result['events']:,} "
                f"dividends paid, {result['amount']:,} µ¢",
                flush=True,
            )
    medians = {
        name: statistics.median(r["seconds"] for r in runs) for name, runs in results.items()
    }
    line = ", ".join(f"{name} {seconds * 1000:,.0f} ms" for name, seconds in medians.items())
    if "before" in medians:
        line += f", after/before {medians['after'] / medians['before']:.2f}x"
    print(f"summary: dividend run, {args.papers:,} papers, {args.trades:,} trades: {line}")


if __name__ == "__main__":
    main()
