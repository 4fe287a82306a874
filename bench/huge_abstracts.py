#!/usr/bin/env python
"""What one hostile feed item costs the ingest: a 600 KB and a 50 MB abstract.

Each size runs in its own process (so its peak memory is its own): an RSS file with 20 ordinary
items and one whose abstract is `"Raft consensus " * N`, ingested from the file into a scratch
Postgres database with 50 listed terms. Prints the ingest time and the process's peak RSS.
Goal (issue 13): seconds, under 500 MB. The ingest cuts the field at 20,000 characters.

    .venv/bin/python bench/huge_abstracts.py [--sizes 600000 50000000]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import production_environment, scratch_database, setup_django  # noqa: E402

PHRASE = "Raft consensus "


def feed(abstract_bytes: int) -> bytes:
    from tests.papers.helpers import rss_feed, rss_item

    items = [rss_item(f"2611.{n:05d}", title=f"Ordinary paper {n}") for n in range(1, 21)]
    hostile = PHRASE * (abstract_bytes // len(PHRASE))
    items.append(rss_item("2611.09999", title="Raft consensus at scale", abstract=hostile))
    return rss_feed(items)


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM rather than ru_maxrss: on Linux ru_maxrss
    survives exec, so a child would report the parent's peak from when it was forked."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(path: Path) -> None:
    env = production_environment(scratch_database("peerrevenue_bench_huge"), redis_db=13)
    env["REDIS_URL"] = ""  # any receiver runs eagerly, inside the measured time
    setup_django(env)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from market.models import Term
    from papers.ingest import ingest_category
    from papers.models import Category, Paper

    phrases = ["Raft", "consensus", "Paxos", "Byzantine", "gossip"]
    phrases += [f"synthetic term {n}" for n in range(50 - len(phrases))]
    Term.objects.bulk_create(Term(phrase=p, slug=p.lower().replace(" ", "-")) for p in phrases)
    category = Category.objects.get(code="cs.DC")
    before = peak_rss_mb()
    size = path.stat().st_size
    started = time.perf_counter()
    run = ingest_category(category=category, file=path, enrich=False)
    seconds = time.perf_counter() - started
    peak = peak_rss_mb()
    stored = len(Paper.objects.get(arxiv_id="2611.09999").abstract)
    print(
        f"file {size / 1e6:5.1f} MB: ingest "
        f"{seconds:5.2f} s, peak RSS {peak:6.0f} MB (before the ingest {before:.0f} MB), "
        f"{run.papers_created} papers, stored abstract {stored:,} characters"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[600_000, 50_000_000])
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    # The feed is written here, so the child's peak memory is the ingest's alone.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            path = Path(folder) / "cs.DC.rss"
            path.write_bytes(feed(size))
            subprocess.run([sys.executable, __file__, "--child", str(path)], check=True)


if __name__ == "__main__":
    main()
