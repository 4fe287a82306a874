#!/usr/bin/env python
"""A paper page with a 500-comment discussion beside the same page with none, in one run,
while the market trades.

Builds a scratch Postgres database with two papers, 40 listed terms and traders, and 500
comments (100 top-level, each with four replies, and votes) on one of the papers; then, while
another process trades 20 times a second through market.trading (as another worker of the
site would), renders each paper's page in this process (anonymous with the page cache off,
and signed in):

- warm: nothing changed since the last render;
- after a new comment: a comment is posted on the page's paper before each render (on the
  empty paper too, which then has one); once a page's first 50 top-level comments are there,
  a new one sorts onto a later page, so most of these renders show a thread that changed
  elsewhere;
- after a new reply shown: a reply to the page's first comment not by the signed-in reader
  is posted before each render (the one before it removed, untimed), so every render shows
  a comment it has not shown before;

and prints p50/p99 of both pages side by side, and their ratio. Goal (bench/pages.py's): the
render after a change <= 5 ms at p50 for the page with none; the long thread's within 4x.

    .venv/bin/python bench/discussion.py [--renders 300] [--no-redis]

The cache is Redis, as in production (``--no-redis``: a table of the database, as on a local
site, where each kept piece's write is a committed INSERT).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (  # noqa: E402
    like_a_worker,
    market_trading,
    scratch_database,
    setup_offline_django,
    setup_redis_django,
    timed_gets,
)

COMMENTS_TOP = 100
REPLIES_EACH = 4
RENDER_GOAL_MS = 5.0


def seed():
    import datetime as dt

    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from discussion import writing
    from discussion.models import Comment, Vote
    from discussion.targets import Target
    from market import cash
    from market.models import Term
    from papers.models import Paper
    from papers.typesetting import TYPESETTER_VERSION, tex_to_html

    def paper(arxiv_id: str) -> Paper:
        title = f"Consensus under partial synchrony, part {arxiv_id[-1]}"
        abstract = "We bound $f < n/3$ Byzantine faults. " * 20
        return Paper.objects.create(
            arxiv_id=arxiv_id,
            version=1,
            title=title,
            title_html=tex_to_html(title, paragraphs=False),
            abstract=abstract,
            abstract_html=tex_to_html(abstract),
            authors=[{"name": "Ada Lovelace", "name_text": "Ada Lovelace", "affiliation": ""}],
            authors_text="Ada Lovelace",
            typesetter_version=TYPESETTER_VERSION,
            primary_category="cs.DC",
            categories=["cs.DC"],
        )

    long, empty = paper("2611.00001"), paper("2611.00002")
    users = get_user_model()
    joined = timezone.now() - dt.timedelta(days=30)
    writers = [
        users.objects.create_user(f"bench-writer-{n}", date_joined=joined) for n in range(20)
    ]
    traders = [users.objects.create_user(f"bench-market-{n}") for n in range(8)]
    for trader in traders:
        cash.open_account(user=trader)
    for n in range(40):
        Term.objects.create(phrase=f"bench term {n}", p0=100_000, k=1_000)
    target = Target("paper", long.pk)
    body = "A point about $\\sum_{i=1}^n x_i \\leq f$ and *why* it holds; see [the proof](https://example.org/p)."
    for n in range(COMMENTS_TOP):
        top = writing.post(user=writers[n % 20], target=target, body=f"{body} ({n})", key=f"t{n}")
        for r in range(REPLIES_EACH):
            writing.post(
                user=writers[(n + r + 1) % 20],
                target=target,
                body=f"Reply {r}: {body} ({n})",
                key=f"r{n}-{r}",
                parent_id=top.pk,
            )
    comments = list(Comment.objects.values_list("pk", "author_id"))
    Vote.objects.bulk_create(
        Vote(comment_id=pk, user=writers[(i * 7) % 20])
        for i, (pk, author) in enumerate(comments)
        if writers[(i * 7) % 20].pk != author
    )
    # A thread of 500 comments grows over days, and autovacuum gathers the tables' statistics
    # meanwhile; without them, right after the bulk seeding, Postgres plans for three rows.
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return long, empty, writers


def p(times: list[float], q: float) -> float:
    return statistics.quantiles(times, n=100)[int(q) - 1] if len(times) > 1 else times[0]


HOSTILE = {
    "200,000 letters": "a" * 200_000,
    "10,000 nested quotes": ">" * 10_000 + " deep",
    "3,000 quoted lines, each deeper": "\n".join(">" * d + " x" for d in range(3000)),
    "1,000 dollars": "$" * 1000,
    "1,000 formulas": "$x$ " * 1000,
    "20,000 stars": "*a " * 20_000,
    "20,000 backticks": "`a " * 20_000,
    "20,000 brackets": "[a" * 20_000,
    "20,000 list items": "\n".join("- item" for _ in range(20_000)),
}


def hostile_texts() -> None:
    """How long the comment renderer takes on hostile text (the tests check what it makes)."""
    from discussion import markup

    for name, text in HOSTILE.items():
        started = time.perf_counter()
        markup.render(text)
        print(f"markup, {name:32}: {(time.perf_counter() - started) * 1000:8.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--renders", type=int, default=300)
    parser.add_argument("--no-redis", action="store_true", help="the cache a table, as locally")
    parser.add_argument("--redis-db", type=int, default=13, help="the Redis database it flushes")
    args = parser.parse_args()
    url = scratch_database("bench_discussion")
    if args.no_redis:
        setup_offline_django(url)
    else:
        setup_redis_django(url, redis_db=args.redis_db)
    from django.conf import settings
    from django.test import Client

    from discussion import writing
    from discussion.targets import Target
    from market import cash

    settings.PAGE_CACHE_SECONDS = 0  # every render is a render, not a kept page
    hostile_texts()
    long, empty, writers = seed()
    for trader in writers:
        cash.open_account(user=trader)
    counter = iter(range(10**9))

    def comment_on(paper):
        def post() -> None:
            n = next(counter)
            writing.post(
                user=writers[n % 20],
                target=Target("paper", paper.pk),
                body=f"A new point, number {n}, with $x_{n}$.",
                key=f"new-{n}",
            )

        return post

    def reply_on(paper):
        from discussion.models import Comment

        # Not the signed-in reader's comment: a reply to them is news, which their next page
        # shows and marks seen, a cost of its own on every render.
        first = (
            Comment.objects.filter(thread__paper=paper, parent=None)
            .exclude(author=writers[0])
            .order_by("-score", "created_at", "id")
            .first()
        )

        assert first is not None, "the page has a comment to reply to"
        last: list[int] = []

        def post() -> None:
            # The reply before is removed (untimed), so the page stays the size it was.
            Comment.objects.filter(pk__in=last).delete()
            n = next(counter)
            reply = writing.post(
                user=writers[n % 20],
                target=Target("paper", paper.pk),
                body=f"A reply, number {n}, with $y_{n}$.",
                key=f"reply-{n}",
                parent_id=first.pk,
            )
            last[:] = [reply.pk]

        def finish() -> None:
            Comment.objects.filter(pk__in=last).delete()

        return post, finish

    anonymous = Client(HTTP_HOST="testserver")
    signed_in = Client(HTTP_HOST="testserver")
    signed_in.force_login(writers[0])
    like_a_worker()
    results = {}
    with market_trading(url, redis_db=None if args.no_redis else args.redis_db) as traded:
        started = time.monotonic()
        for who, client in (("anonymous", anonymous), ("signed-in", signed_in)):
            for name, paper in (("none", empty), ("500", long)):
                url = paper.get_absolute_url()
                timed_gets(client, url, 5)  # warm
                warm = timed_gets(client, url, args.renders)
                after = timed_gets(client, url, max(10, args.renders // 5), comment_on(paper))
                reply, finish = reply_on(paper)
                shown = timed_gets(client, url, max(10, args.renders // 5), reply)
                finish()
                results[who, name] = (warm, after, shown)
    elapsed = time.monotonic() - started
    print(f"trades while measuring: {traded():,} ({traded() / elapsed:.1f}/s)")
    passed = True
    for who in ("anonymous", "signed-in"):
        for what, index in (("warm", 0), ("after a new comment", 1), ("after a reply shown", 2)):
            none = results[who, "none"][index]
            many = results[who, "500"][index]
            ratio = statistics.median(many) / statistics.median(none)
            print(
                f"{who:9} {what:19}: no comments p50 {p(none, 50):6.2f} ms p99 {p(none, 99):6.2f}"
                f" ms | 500 comments p50 {p(many, 50):6.2f} ms p99 {p(many, 99):6.2f} ms"
                f" | ratio {ratio:.2f}"
            )
            if index >= 1:
                passed &= statistics.median(none) <= RENDER_GOAL_MS and ratio <= 4
    print(
        f"summary: {'PASS' if passed else 'FAIL'} (goal: after a change <= {RENDER_GOAL_MS:g} ms"
        " p50 with none, the 500-comment page within 4x of it)"
    )


if __name__ == "__main__":
    main()
