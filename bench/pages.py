#!/usr/bin/env python
"""Category page throughput: Django under gunicorn against a trivial app serving the same bytes.

Builds a scratch Postgres database with a week of cs.DC listings (about 100 papers) and 200
listed terms, serves the site with gunicorn (2 workers, DJANGO_DEBUG=0, Redis cache), loads
/list/cs.DC/<date>/ with wrk, then does the same against a WSGI app that returns the identical
response bytes under the same gunicorn settings, alternating the two for a few rounds and
comparing medians. Goal: ratio >= 0.5.

    .venv/bin/python bench/pages.py [--seconds 10] [--connections 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import re
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (  # noqa: E402
    free_port,
    production_environment,
    require,
    scratch_database,
    setup_django,
    start_gunicorn,
    stop,
    wait_for,
)
from feedgen import rss  # noqa: E402

WEEK = [dt.date(2026, 11, 23) + dt.timedelta(days=n) for n in range(5)]  # Monday to Friday
PAPERS_PER_DAY = 20
TERMS = 200


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


def wrk(url: str, *, seconds: int, connections: int) -> float:
    output = subprocess.run(
        ["wrk", "-t", "2", "-c", str(connections), "-d", f"{seconds}s", url],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    if errors:
        sys.exit(f"{url} answered {errors.group(1)} errors under load:\n{output}")
    return float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    require("wrk", "apt-get install -y wrk")

    env = production_environment(scratch_database("peerrevenue_bench_pages"), redis_db=14)
    setup_django(env)
    print("Seeding a week of listings and 200 terms…", flush=True)
    seed()
    from django.core.cache import cache

    cache.clear()
    from papers.models import Listing

    papers = Listing.objects.count()

    path = f"/list/cs.DC/{WEEK[-1]}/"
    site_port = free_port()
    site = start_gunicorn("peerrevenue.wsgi", port=site_port, env=env)
    trivial = None
    body_file = tempfile.NamedTemporaryFile(suffix=".html")  # noqa: SIM115 - closed below
    try:
        site_url = f"http://127.0.0.1:{site_port}{path}"
        wait_for(site_url)
        with urllib.request.urlopen(site_url) as response:
            body = response.read()
            content_type = response.headers["Content-Type"]
        body_file.write(body)
        body_file.flush()
        trivial_port = free_port()
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
        # Alternate the two, several rounds, and keep the medians: the machine's other load
        # then weighs on both sides alike.
        django_rates, trivial_rates = [], []
        for _ in range(args.rounds):
            django_rates.append(wrk(site_url, seconds=args.seconds, connections=args.connections))
            trivial_rates.append(
                wrk(trivial_url, seconds=args.seconds, connections=args.connections)
            )
    finally:
        stop(site)
        if trivial is not None:
            stop(trivial)
        body_file.close()
    django_rate = statistics.median(django_rates)
    trivial_rate = statistics.median(trivial_rates)
    print(
        "rounds (Django / trivial): "
        + ", ".join(
            f"{d:,.0f} / {t:,.0f}" for d, t in zip(django_rates, trivial_rates, strict=True)
        )
    )

    ratio = django_rate / trivial_rate
    print(f"listings in database:        {papers}")
    print(f"page:                        {path} ({len(body):,} bytes)")
    print(f"Django (gunicorn, 2 workers): {django_rate:,.0f} requests/s (median)")
    print(f"trivial WSGI app, same bytes: {trivial_rate:,.0f} requests/s (median)")
    print(
        f"summary: pages {django_rate:,.0f} req/s vs trivial {trivial_rate:,.0f} req/s, "
        f"ratio {ratio:.2f} (goal >= 0.5) {'PASS' if ratio >= 0.5 else 'FAIL'}"
    )


if __name__ == "__main__":
    main()
