#!/usr/bin/env python
"""Ingest throughput against the bare parse of the same feed.

Generates a 2,000-item arXiv RSS file with math-heavy abstracts, ingests it into an empty
Postgres database with 500 listed terms (parse, typeset, upsert, mentions, dividends), and in
the same run times plain feedparser parsing of the same file. Goal: ingest <= 5x the parse.

    .venv/bin/python bench/ingest.py [--items 2000] [--terms 500]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import production_environment, scratch_database, setup_django  # noqa: E402
from feedgen import rss  # noqa: E402

DAY = dt.date(2026, 11, 27)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--terms", type=int, default=500)
    args = parser.parse_args()

    env = production_environment(scratch_database("peerrevenue_bench_ingest"), redis_db=13)
    env["REDIS_URL"] = ""  # dividends run eagerly, inside the measured time
    setup_django(env)
    from django.core.cache import cache
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("createcachetable", verbosity=0)  # without Redis the cache is a table
    cache.clear()

    import feedparser

    from market.models import Mention, Term
    from market.starter_terms import STARTER_TERMS
    from papers.ingest import ingest_category
    from papers.models import Category

    starters = [Term(phrase=p, slug="", aliases=a, description=d) for p, a, d in STARTER_TERMS]
    fillers = [Term(phrase=f"synthetic term {n}") for n in range(args.terms - len(starters))]
    for term in starters + fillers:
        term.slug = term.slug or term.phrase.lower().replace(" ", "-")
    Term.objects.bulk_create(starters + fillers)

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "cs.DC.rss"
        path.write_bytes(rss(date=DAY, items=args.items, seed=7))
        size = path.stat().st_size

        started = time.perf_counter()
        parsed = feedparser.parse(path.read_bytes())
        parse_seconds = time.perf_counter() - started
        assert len(parsed.entries) == args.items

        category = Category.objects.get(code="cs.DC")
        started = time.perf_counter()
        run = ingest_category(category=category, file=path, enrich=False)
        ingest_seconds = time.perf_counter() - started

    ratio = ingest_seconds / parse_seconds
    print(f"feed:                 {args.items:,} items, {size / 1e6:.1f} MB, {args.terms} terms")
    for label, seconds in (("feedparser alone", parse_seconds), ("whole ingest", ingest_seconds)):
        print(f"{label + ':':<22}{seconds:.2f} s ({args.items / seconds:,.0f} items/s)")
    print(
        f"papers created:       {run.papers_created:,}, listings {run.listings_created:,}, "
        f"mentions {Mention.objects.count():,}"
    )
    print(
        f"summary: ingest {args.items / ingest_seconds:,.0f} items/s, bare parse "
        f"{args.items / parse_seconds:,.0f} items/s, ratio {ratio:.1f}x (goal <= 5x) "
        f"{'PASS' if ratio <= 5 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
