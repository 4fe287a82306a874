"""Recommendations at scale: stored picks and /hot/ read per request, and the nightly refit.

    .venv/bin/python bench/recommend.py [--papers 300000] [--readers 1000] [--reuse]

Loads the search benchmark's synthetic papers (bench/search.py: Zipf words over 30,000, five
years of daily listings) into a scratch database, gives each of ``--readers`` readers 5–50
saved papers (a third of them under two tags), a few trades and mentions for /hot/, then
times: the text model's fit, the nightly refit of every reader (``library.tasks.nightly``'s
reader part) and its peak memory, then ``/recommended/`` and ``/hot/`` in-process (Django's
test client, kept pieces warm as on a running site, p50/p95 over ``--requests``).
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import reused_or_scratch, setup_offline_django  # noqa: E402

DATABASE = "pr_recommend_bench"


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=300_000)
    parser.add_argument("--readers", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--reuse", action="store_true")
    args = parser.parse_args()

    url, reuse = reused_or_scratch(DATABASE, papers=args.papers, reuse=args.reuse)
    setup_offline_django(url)
    import search as search_bench
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from library.models import Recommendation, SavedPaper, Shelf, SimilarList, TextModel
    from library.recommend import pool as pools
    from library.recommend import readers, similar, text

    if reuse:
        print(f"Reusing {DATABASE} with {args.papers:,} papers")
    else:
        print(f"Loading {args.papers:,} papers into {DATABASE}")
        search_bench.load(args.papers, args.seed)

    rng = random.Random(args.seed)
    User = get_user_model()
    if not reuse or not User.objects.filter(username="bench-0").exists():
        started = time.monotonic()
        ids = list(
            connection.cursor().execute("SELECT id FROM papers_paper WHERE NOT hidden").fetchall()
        )
        paper_ids = [pk for (pk,) in ids]
        users = User.objects.bulk_create(
            User(username=f"bench-{n}", email=f"bench-{n}@example.org") for n in range(args.readers)
        )
        rows = []
        for user in users:
            # Readers keep to a neighbourhood of ids (a topic, in time), as people do.
            centre = rng.randrange(len(paper_ids))
            for pk in rng.sample(
                paper_ids[max(0, centre - 2000) : centre + 2000], rng.randint(5, 50)
            ):
                rows.append(SavedPaper(user=user, paper_id=pk))
        SavedPaper.objects.bulk_create(rows, ignore_conflicts=True)
        Shelf.objects.bulk_create(Shelf(user=user, changes=1) for user in users)
        print(
            f"  {len(rows):,} saves for {len(users):,} readers: {time.monotonic() - started:.0f} s"
        )

    started = time.monotonic()
    text.fit()
    fit_seconds = time.monotonic() - started
    model = text.current()
    assert model is not None
    stored = TextModel.objects.get()
    print(
        f"Text model: fitted on {stored.papers:,} papers in {fit_seconds:.0f} s, "
        f"{stored.features:,} features, {len(bytes(stored.blob)) / 1e6:.1f} MB stored; "
        f"peak memory {peak_mb():.0f} MB"
    )
    started = time.monotonic()
    pool = pools.current(model)
    print(
        f"Pool: {len(pool.candidates):,} new papers + {len(pool.ids) - len(pool.candidates):,}"
        f" background, built in {time.monotonic() - started:.1f} s"
    )
    started = time.monotonic()
    summary = readers.refit_readers(only_changed=False)
    refit_seconds = time.monotonic() - started
    print(
        f"Nightly refit: {summary['readers']:,} readers, {summary['stored']:,} scores stored in "
        f"{refit_seconds:.0f} s ({1000 * refit_seconds / max(1, summary['readers']):.0f} ms a "
        f"reader); peak memory {peak_mb():.0f} MB"
    )
    started = time.monotonic()
    for paper_id in pool.candidates[:200]:
        similar.store(paper_id=paper_id)
    print(f"Similar papers: {1000 * (time.monotonic() - started) / 200:.0f} ms a paper (200)")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_size_pretty(pg_total_relation_size('library_recommendation')),"
            " pg_size_pretty(pg_total_relation_size('library_similarlist')),"
            " pg_size_pretty(pg_total_relation_size('library_savedpaper'))"
        )
        sizes = cursor.fetchone()
    print(
        f"Stored: recommendations {Recommendation.objects.count():,} rows ({sizes[0]}), "
        f"similar lists {SimilarList.objects.count():,} ({sizes[1]}), saves ({sizes[2]})"
    )

    client = Client()
    timings: dict[str, list[float]] = {"/recommended/": [], "/hot/": []}
    bench_users = list(User.objects.filter(username__startswith="bench-")[:50])
    for n in range(args.requests):
        client.force_login(bench_users[n % len(bench_users)])
        for path in timings:
            began = time.perf_counter()
            response = client.get(path)
            timings[path].append(1000 * (time.perf_counter() - began))
            assert response.status_code == 200, (path, response.status_code)
    for path, values in timings.items():
        print(f"{path}: {percentiles(values[len(bench_users) :])} (first requests: cold)")


if __name__ == "__main__":
    main()
