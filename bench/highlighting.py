#!/usr/bin/env python
"""Mention matching on hostile texts: seconds to find 2k, 8k and 32k mentions in one text.

A feed item whose abstract repeats a listed term tens of thousands of times once took the
category page down (the choice among overlapping matches was quadratic). The matcher must
stay linear in the text: each fourfold step should take about four times as long, not sixteen.
Needs no database: the matcher is built from plain rows.

    .venv/bin/python bench/highlighting.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")

import django  # noqa: E402

django.setup()

from market.highlighting import Matcher  # noqa: E402

SIZES = (2_000, 8_000, 32_000)
# Overlapping terms on purpose: "Raft consensus" and "consensus protocol" compete for every
# "consensus", so the choice among candidates does real work.
TERMS = ["Raft", "consensus", "Raft consensus", "consensus protocol", "protocol", "key-value store"]
TEXT_UNIT = "Raft consensus protocol and a key-value store. "  # 3 chosen mentions per unit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per size (best is kept)")
    args = parser.parse_args()
    rows = [{"id": n, "slug": f"t{n}", "phrase": p, "aliases": []} for n, p in enumerate(TERMS)]
    previous = None
    for mentions in SIZES:
        text = TEXT_UNIT * (mentions // 3)
        best = float("inf")
        for _ in range(args.repeat):
            matcher = Matcher.from_terms(rows)  # fresh: no per-word memo from the last run
            started = time.perf_counter()
            found = matcher.find_mentions(text)
            best = min(best, time.perf_counter() - started)
        growth = f"  ×{best / previous:.1f} for 4× the text" if previous else ""
        print(f"{len(found):>6,} mentions in {len(text):>9,} characters: {best:8.3f} s{growth}")
        previous = best


if __name__ == "__main__":
    main()
