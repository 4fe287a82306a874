#!/usr/bin/env python
"""Mention-trend counting: the matcher over every paper of a long history, for all terms at once.

A term page whose trend is not cached (after an ingest or a term change) pays for one pass of
``market.trends.count_by_week`` over every announced paper. This times that pass in memory (no
database) on synthetic abstracts of arXiv length with the starter terms plus made-up phrases.

    .venv/bin/python bench/trends.py [--papers 20000] [--terms 500]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")

import django  # noqa: E402

django.setup()

from market.highlighting import Matcher  # noqa: E402
from market.starter_terms import STARTER_TERMS  # noqa: E402
from market.trends import count_by_week, first_words  # noqa: E402

_SENTENCE = (
    "we propose a distributed system for scheduling training jobs across clusters "
    "with low latency and high throughput using replicated state and adaptive "
    "batching of requests on heterogeneous accelerators while tolerating failures of "
    "workers and network partitions"
)
WORDS = _SENTENCE.split()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--papers", type=int, default=20_000)
    parser.add_argument("--terms", type=int, default=500)
    args = parser.parse_args()
    rng = random.Random(16)
    phrases = [(p, aliases) for p, aliases, _ in STARTER_TERMS]
    while len(phrases) < args.terms:
        # Made-up first words, as real terms mostly start with words an abstract rarely uses.
        phrases.append((f"{rng.choice(WORDS)}{len(phrases)} {rng.choice(WORDS)}", []))
    rows: list[dict[str, Any]] = [
        {"id": n, "slug": f"t{n}", "phrase": p, "aliases": a} for n, (p, a) in enumerate(phrases)
    ]
    matcher = Matcher.from_terms(rows)
    start = dt.date(2024, 1, 1)
    papers = []
    for n in range(args.papers):
        words = [rng.choice(WORDS) for _ in range(220)]  # ~1,400 characters
        for _ in range(3):
            words.insert(rng.randrange(len(words)), rng.choice(phrases)[0])
        papers.append((" ".join(words[:12]), " ".join(words), start + dt.timedelta(n % 700)))
    began, cpu = time.perf_counter(), time.process_time()
    counts = count_by_week(matcher, papers)
    elapsed, cpu = time.perf_counter() - began, time.process_time() - cpu
    mentions = sum(sum(c.values()) for c in counts.values())
    print(f"{args.papers:,} papers, {len(rows):,} terms, {mentions:,} (term, paper) mentions")
    each = cpu / args.papers * 1e6
    print(f"every term at once: {elapsed:.2f} s ({cpu:.2f} s CPU), {each:.0f} µs a paper")
    # What a term page pays on a cache miss: the database keeps the papers containing the
    # term's first words (done here in Python), then the matcher runs over those.
    by_use = sorted(rows, key=lambda row: -sum(counts.get(row["id"], {}).values()))
    for name, row in (("most used", by_use[0]), ("median", by_use[len(by_use) // 2])):
        firsts = first_words([row["phrase"], *row["aliases"]])
        began = time.process_time()
        kept = [p for p in papers if any(w in (p[0] + " " + p[1]).lower() for w in firsts)]
        count_by_week(matcher, kept)
        took = time.process_time() - began
        phrase = row["phrase"]
        print(f"one term, {name} ({phrase!r}): {len(kept):,} candidate papers, {took:.2f} s CPU")
    print(f"summary: {args.papers / cpu:,.0f} papers/s CPU for every term at once")


if __name__ == "__main__":
    main()
