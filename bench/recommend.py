"""Recommendations at scale: stored picks and /hot/ read per request, and the nightly refit.

    .venv/bin/python bench/recommend.py [--papers 300000] [--readers 1000] [--reuse]

Loads the search benchmark's synthetic papers (bench/search.py: Zipf words over 30,000, five
years of daily listings) into a scratch database, gives each of ``--readers`` readers 5–50
saved papers (a third of them under two tags) saved over the last two months, and the market
some attention for /hot/ (terms, trades by a hundred readers, mentions in recent papers).
Then, each step timed on its own:

- the text model's fit (in a child process, so that its peak memory is its own);
- the nightly refit of every reader (``library.recommend.readers.refit_readers``: the pool,
  then each reader's classifiers and stored picks) and this process's peak memory;
- the hot lists' refresh (``library.hot.refresh``) and similar papers for 200 new papers;
- the stored tables' sizes (``pg_total_relation_size``);
- ``/recommended/`` and ``/hot/`` in-process through Django's test client, signed in as
  ``--requests`` readers in turn: p50/p95 of each reader's first request (their picks piece
  made) and of the later ones (kept pieces warm, as on a running site), then the same with a
  save by one of them every tenth request (their picks piece is made again).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import reused_or_scratch, setup_offline_django  # noqa: E402

DATABASE = "pr_recommend_bench"
GOALS_MS = {"/recommended/": 50.0, "/hot/": 30.0}
GOAL_NIGHTLY_S = 600.0
REFERENCE = "/market/rules/"
TERMS = [
    "consensus",
    "gpu",
    "cache",
    "replication",
    "quorum",
    "gradient",
    "transformer",
    "kernel",
    "sharding",
    "sketch",
    "serverless",
    "blockchain",
    "scheduling",
    "compression",
    "federated",
]


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return (
        f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms, max {ordered[-1]:.1f} ms"
        f" ({len(ordered)} requests)"
    )


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load_average() -> str:
    return " ".join(f"{n:.2f}" for n in os.getloadavg())


def fit_in_child(queue) -> None:
    """The text model's fit, in a forked child: its peak memory is the fit's alone."""
    from library.models import TextModel
    from library.recommend import text

    started = time.monotonic()
    text.fit()
    stored = TextModel.objects.get()
    queue.put(
        (
            time.monotonic() - started,
            stored.papers,
            stored.features,
            len(bytes(stored.blob)),
            peak_mb(),
        )
    )


def make_readers(*, readers: int, rng: random.Random) -> None:
    from django.contrib.auth import get_user_model
    from django.db import connection

    from library.models import SavedPaper, Shelf, Tag

    started = time.monotonic()
    User = get_user_model()
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM papers_paper WHERE NOT hidden ORDER BY id")
        paper_ids = [pk for (pk,) in cursor.fetchall()]
    users = User.objects.bulk_create(
        User(username=f"bench-{n}", email=f"bench-{n}@example.org") for n in range(readers)
    )
    rows = []
    for user in users:
        # Readers keep to a neighbourhood of ids (a topic, in time), as people do.
        centre = rng.randrange(len(paper_ids))
        for pk in rng.sample(paper_ids[max(0, centre - 2000) : centre + 2000], rng.randint(5, 50)):
            rows.append(SavedPaper(user=user, paper_id=pk))
    SavedPaper.objects.bulk_create(rows, ignore_conflicts=True)
    with connection.cursor() as cursor:
        # Saved over the last two months, so a day, a week and a month differ.
        cursor.execute(
            "UPDATE library_savedpaper SET saved_at = now() - random() * interval '60 days'"
        )
    # A third of the readers file their papers under two tags.
    tagged = users[::3]
    tags = Tag.objects.bulk_create(
        Tag(user=user, name=name) for user in tagged for name in ("to read", "topic")
    )
    tags_of = {user.pk: tags[2 * n : 2 * n + 2] for n, user in enumerate(tagged)}
    Through = SavedPaper.tags.through
    Through.objects.bulk_create(
        Through(savedpaper_id=item.pk, tag_id=tags_of[item.user_id][n % 2].pk)
        for n, item in enumerate(
            SavedPaper.objects.filter(user_id__in=list(tags_of)).only("pk", "user_id")
        )
    )
    Shelf.objects.bulk_create(Shelf(user=user, changes=1) for user in users)
    print(f"  {len(rows):,} saves for {len(users):,} readers: {time.monotonic() - started:.0f} s")


def make_market_attention(*, rng: random.Random) -> None:
    """Terms, a hundred readers' trades in them, and mentions in the newest papers (dated in
    the last month: the synthetic listings end before it)."""
    import datetime as dt

    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.utils import timezone

    from market import cash, trading
    from market.models import Mention, Term

    started = time.monotonic()
    terms = [Term.objects.create(phrase=phrase) for phrase in TERMS]
    with connection.cursor() as cursor:
        cursor.execute("SELECT id FROM papers_paper ORDER BY id DESC LIMIT 5000")
        newest = [pk for (pk,) in cursor.fetchall()]
    today = timezone.localdate()
    Mention.objects.bulk_create(
        (
            Mention(term=term, paper_id=pk, date=today - dt.timedelta(days=rng.randrange(30)))
            for term in terms
            for pk in rng.sample(newest, 200)
        ),
        ignore_conflicts=True,
    )
    traders = list(get_user_model().objects.filter(username__startswith="bench-")[:100])
    trades = 0
    for n, user in enumerate(traders):
        cash.open_account(user=user)
        for k in range(5):
            term = rng.choice(terms)
            trading.buy(
                user=user, term=term, shares=rng.randint(1, 5), max_cost=None, key=f"b{n}.{k}"
            )
            trades += 1
    print(
        f"  {len(terms)} terms, {trades} trades, {Mention.objects.count():,} mentions:"
        f" {time.monotonic() - started:.0f} s"
    )


def table_sizes() -> list[tuple[str, int, str]]:
    from django.db import connection

    tables = [
        "library_recommendation",
        "library_hotpaper",
        "library_similarlist",
        "library_textmodel",
        "library_shelf",
        "library_savedpaper",
        "library_tag",
        "library_savedpaper_tags",
        "papers_paper",
    ]
    found = []
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(
                f"SELECT count(*), pg_size_pretty(pg_total_relation_size('{table}')) FROM {table}"
            )
            rows, size = cursor.fetchone()
            found.append((table, rows, size))
    return found


def time_requests(
    client,
    users: list,
    paths: list[str],
    *,
    requests: int,
    save_every: int,
    rng: random.Random,
    seen: set[tuple[str, int]],
) -> dict[str, dict[str, list[float]]]:
    from library import saves
    from papers.models import Paper

    timings: dict[str, dict[str, list[float]]] = {p: {"first": [], "later": []} for p in paths}
    some_papers = list(Paper.objects.visible().order_by("-id").values_list("pk", flat=True)[:500])
    for n in range(requests):
        user = users[n % len(users)]
        if save_every and n and n % save_every == 0:
            # A reader saves a paper: their shelf moves, so their picks piece is made again,
            # and everybody's stars are filled again.
            saves.save(user=user, paper=Paper.objects.get(pk=rng.choice(some_papers)))
            seen.difference_update({(p, user.pk) for p in paths})
        client.force_login(user)
        for path in paths:
            began = time.perf_counter()
            response = client.get(path)
            elapsed = 1000 * (time.perf_counter() - began)
            assert response.status_code == 200, (path, response.status_code)
            timings[path]["later" if (path, user.pk) in seen else "first"].append(elapsed)
            seen.add((path, user.pk))
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=300_000)
    parser.add_argument("--readers", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument(
        "--requests-only",
        action="store_true",
        help="with --reuse: time the requests against the stored picks of an earlier run",
    )
    args = parser.parse_args()
    print(f"Load average at the start: {load_average()}")

    url, reuse = reused_or_scratch(DATABASE, papers=args.papers, reuse=args.reuse)
    setup_offline_django(url)
    import search as search_bench
    from django.contrib.auth import get_user_model
    from django.db import connections

    from library import hot
    from library.models import Recommendation
    from library.recommend import pool as pools
    from library.recommend import readers, similar, text
    from market.models import Term

    if reuse:
        print(f"Reusing {DATABASE} with {args.papers:,} papers")
    else:
        print(f"Loading {args.papers:,} papers into {DATABASE}")
        search_bench.load(args.papers, args.seed)

    rng = random.Random(args.seed)
    User = get_user_model()
    if not User.objects.filter(username="bench-0").exists():
        make_readers(readers=args.readers, rng=rng)
    if not Term.objects.filter(phrase=TERMS[0]).exists():
        make_market_attention(rng=rng)
    if args.requests_only and Recommendation.objects.exists():
        time_pages(User, rng=rng, requests=args.requests)
        return
    print(f"Peak memory before the fit: {peak_mb():.0f} MB")

    connections.close_all()  # the child opens its own
    queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=fit_in_child, args=(queue,))
    child.start()
    fit_seconds, papers, features, blob, fit_peak = queue.get()
    child.join()
    print(
        f"Text model: fitted on {papers:,} papers in {fit_seconds:.0f} s, {features:,} features,"
        f" {blob / 1e6:.1f} MB stored; the fit's peak memory {fit_peak:.0f} MB"
    )

    started = time.monotonic()
    model = text.current()
    assert model is not None
    pool = pools.current(model)
    pool_seconds = time.monotonic() - started
    print(
        f"Pool: {len(pool.candidates):,} new papers + {len(pool.ids) - len(pool.candidates):,}"
        f" background, built in {pool_seconds:.1f} s (model loaded and pool vectorised)"
    )
    started = time.monotonic()
    summary = readers.refit_readers(only_changed=False)
    refit_seconds = time.monotonic() - started
    print(
        f"Refit of every reader: {summary['readers']:,} readers, {summary['stored']:,} picks"
        f" stored in {refit_seconds:.0f} s ({1000 * refit_seconds / max(1, summary['readers']):.0f}"
        f" ms a reader); this process's peak memory {peak_mb():.0f} MB"
    )
    nightly = fit_seconds + pool_seconds + refit_seconds
    print(
        f"Nightly (fit + pool + every reader): {nightly:.0f} s against a goal of"
        f" {GOAL_NIGHTLY_S:.0f} s: {'met' if nightly <= GOAL_NIGHTLY_S else 'NOT met'}"
    )
    started = time.monotonic()
    ranked = hot.refresh()
    print(
        f"Hot lists refreshed in {1000 * (time.monotonic() - started):.0f} ms"
        f" ({', '.join(f'{k} {v}' for k, v in ranked.items())} rows)"
    )
    started = time.monotonic()
    for paper_id in pool.candidates[:200]:
        similar.store(paper_id=paper_id)
    per_similar = (time.monotonic() - started) / 200
    whole_pool = per_similar * len(pool.candidates)
    print(
        f"Similar papers: {1000 * per_similar:.0f} ms a paper (200); the pool's"
        f" {len(pool.candidates):,} new papers would take {whole_pool:.0f} s"
    )
    print("Stored (pg_total_relation_size):")
    for table, rows, size in table_sizes():
        print(f"  {table}: {rows:,} rows, {size}")
    print(f"  picks per reader: {Recommendation.objects.count() / max(1, summary['readers']):.0f}")

    time_pages(User, rng=rng, requests=args.requests)


def time_pages(User, *, rng: random.Random, requests: int) -> None:
    from django.test import Client

    client = Client()
    users = list(User.objects.filter(username__startswith="bench-").order_by("pk")[:100])
    # The rules page: a signed-in page with nothing of the library, for the floor every
    # signed-in request pays here (session, user, notices, facts) on these cores.
    paths = [*GOALS_MS, REFERENCE]
    seen: set[tuple[str, int]] = set()
    for label, save_every in (("quiet", 0), ("a save every 10 requests", 10)):
        print(f"Requests, {label} (load average {load_average()}):")
        timings = time_requests(
            client, users, paths, requests=requests, save_every=save_every, rng=rng, seen=seen
        )
        for path in paths:
            later = timings[path]["later"]
            goal = GOALS_MS.get(path)
            verdict = (
                f"goal p95 <= {goal:.0f} ms: {'met' if p95(later) <= goal else 'NOT met'}"
                if goal is not None
                else "no goal: the floor of a signed-in page"
            )
            print(f"  {path} kept pieces warm: {percentiles(later)}; {verdict}")
            if path == "/recommended/" and timings[path]["first"]:
                print(f"  {path} a reader's first: {percentiles(timings[path]['first'])}")
    print(f"Load average at the end: {load_average()}")


if __name__ == "__main__":
    main()
