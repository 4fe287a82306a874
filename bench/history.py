#!/usr/bin/env python
"""History at scale: a synthetic metadata snapshot, imported, re-imported, and pages read.

Writes a snapshot in arXiv's real format (one JSON object a line: id, submitter, authors as one
string and as authors_parsed, title, comments, journal-ref, doi, report-no, categories
space-separated with the primary first, license, abstract, versions with RFC 2822 dates,
update_date) of ``--papers`` papers submitted from April 2007 to November 2026, more each year;
a third of the abstracts carry TeX (maths, \\emph, accents); authors are drawn Zipf-like from a
pool of names (a few are very prolific), categories from a skewed cs distribution with 0-3
cross-lists (some outside cs). Then, on a scratch database:

1. ``manage.py import_snapshot`` over every cs category, in a child process: wall time,
   papers/s and the child's peak memory (maxrss: its largest process), and the peak of it and
   its worker processes together (sampled);
2. the same command again over the same file (the re-run: reads everything, writes nothing);
3. the database's size;
4. in-process renders (``--renders`` each, the page cache off, kept pieces emptied before
   each: the first reader after a change) of the cs.DC category page, cs.DC's day ten years
   ago, the most prolific author's page and a term page: p50 and p95; with ``--live``, each
   page again while another process trades through ``market.trading`` at 20 trades a second
   (for at least 10 s a page).

Goals: 1,000,000 papers imported in <= 15 minutes, peak <= 1 GB; the re-run <= 2 minutes;
each page p95 <= 20 ms.

    .venv/bin/python bench/history.py [--papers 100000] [--renders 50] [--live] [--keep]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import (  # noqa: E402
    POSTGRES_ADMIN_URL,
    ROOT,
    market_trading,
    scratch_database,
    setup_offline_django,
)
from search import FIRST_NAMES, Corpus  # noqa: E402

DATABASE = "pr_history_bench"
START = dt.date(2007, 4, 1)
MONTHS = 236  # April 2007 to November 2026

# Primary categories of cs papers, roughly as arXiv's are skewed (cs.LG, cs.CV, cs.CL lead).
PRIMARY_WEIGHTS = {
    "cs.LG": 20, "cs.CV": 14, "cs.CL": 10, "cs.AI": 6, "cs.RO": 4, "cs.CR": 4, "cs.IT": 4,
    "cs.DC": 3, "cs.NI": 3, "cs.SE": 3, "cs.DS": 3, "cs.LO": 2, "cs.HC": 2, "cs.SI": 2,
    "cs.IR": 2, "cs.SY": 2, "cs.NE": 1, "cs.PL": 1, "cs.DB": 1, "cs.CY": 1, "cs.GT": 1,
    "cs.CC": 1, "cs.CG": 1, "cs.DM": 1, "cs.FL": 1, "cs.MA": 1, "cs.PF": 1, "cs.AR": 1,
}  # fmt: skip
CROSS = [*PRIMARY_WEIGHTS, "stat.ML", "math.OC", "eess.SP", "eess.SY", "quant-ph", "math.PR"]
TEX = [
    "$O(n \\log n)$",
    "$f < n/3$",
    "\\emph{Byzantine}",
    "$\\epsilon$-approximate",
    "$\\sum_{i=1}^{n} x_i$",
    "\\textbf{linearizable}",
    "$\\mathcal{O}(1)$",
    "up to 41\\%",
    "$2^{k}$",
]
ACCENTED = ['M\\"uller', "P\\'erez", "Dvo\\v{r}\\'ak", "Da\\u{g}l{\\i}", 'Schr\\"oder']
LICENSES = [
    "http://arxiv.org/licenses/nonexclusive-distrib/1.0/",
    "http://creativecommons.org/licenses/by/4.0/",
    None,
]


def rfc2822(moment: dt.datetime) -> str:
    return moment.strftime("%a, %-d %b %Y %H:%M:%S GMT")


def write_snapshot(path: Path, *, papers: int, seed: int) -> None:
    """Write the snapshot of ``papers`` papers."""
    corpus = Corpus(seed)
    rng = corpus.rng
    # More papers each month: the month's share grows linearly, about 8x over the years.
    weights = [1 + 7 * month / MONTHS for month in range(MONTHS)]
    scale = papers / sum(weights)
    counts = [int(weight * scale) for weight in weights]
    counts[-1] += papers - sum(counts)
    primaries, primary_weights = list(PRIMARY_WEIGHTS), list(PRIMARY_WEIGHTS.values())
    with path.open("w", encoding="utf-8") as out:
        for month, count in enumerate(counts):
            year, month0 = divmod(START.month - 1 + month, 12)
            first = dt.datetime(START.year + year, month0 + 1, 1, tzinfo=dt.UTC)
            days = 28
            width = 4 if first.year < 2015 else 5
            for number in range(1, count + 1):
                created = first + dt.timedelta(seconds=rng.randrange(days * 86400))
                arxiv_id = f"{first:%y%m}.{number:0{width}d}"
                names = [corpus.author() for _ in range(min(40, int(rng.paretovariate(1.6))))]
                names = list(dict.fromkeys(names))
                if rng.random() < 0.05:
                    names[0] = f"{rng.choice(FIRST_NAMES)} {rng.choice(ACCENTED)}"
                primary = rng.choices(primaries, weights=primary_weights)[0]
                cross = rng.sample(CROSS, rng.choice([0, 0, 1, 1, 2, 3]))
                categories = list(dict.fromkeys([primary, *cross]))
                sentences = []
                for _ in range(rng.randint(4, 8)):
                    sentences.append(" ".join(corpus.text(rng.randint(12, 24))).capitalize() + ".")
                if number % 3 == 0:
                    sentences.insert(1, f"We show {rng.choice(TEX)} holds for {rng.choice(TEX)}.")
                abstract = "  " + "\n".join(
                    " ".join(sentences)[i : i + 80] for i in range(0, len(" ".join(sentences)), 80)
                )
                versions = [{"version": "v1", "created": rfc2822(created)}]
                for extra in range(rng.choice([0, 0, 0, 1, 1, 2])):
                    created += dt.timedelta(days=rng.randint(1, 200))
                    versions.append({"version": f"v{extra + 2}", "created": rfc2822(created)})
                record = {
                    "id": arxiv_id,
                    "submitter": names[0],
                    "authors": ", ".join(names[:-1])
                    + (" and " if len(names) > 1 else "")
                    + names[-1],
                    "title": " ".join(corpus.text(rng.randint(5, 14))).title(),
                    "comments": f"{rng.randint(4, 40)} pages" if rng.random() < 0.6 else None,
                    "journal-ref": None,
                    "doi": f"10.1145/{rng.randint(1000000, 9999999)}"
                    if rng.random() < 0.2
                    else None,
                    "report-no": None,
                    "categories": " ".join(categories),
                    "license": rng.choice(LICENSES),
                    "abstract": abstract + "\n",
                    "versions": versions,
                    "update_date": created.date().isoformat(),
                    "authors_parsed": [[*name.split(" ", 1)[::-1], ""] for name in names],
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def _tree_rss(pid: int) -> int:
    """Resident bytes of a process and its descendants (the import's worker processes), now."""
    total = 0
    pending = [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while pending:
        current = pending.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except (OSError, IndexError, ValueError):
            continue
        pending += [int(child) for child in children]
    return total


def run_import(path: Path, env: dict[str, str]) -> tuple[float, int, str, int, float]:
    """(seconds, the child's peak resident memory in bytes, its report, the peak of the
    child and its worker processes together, sampled every half second, and the CPU seconds
    they used: PostgreSQL's are not in it)."""

    from papers.categories import CS_CATEGORIES

    command = [sys.executable, str(ROOT / "manage.py"), "import_snapshot", str(path)]
    for code in CS_CATEGORIES:
        command += ["--category", code]
    started = time.perf_counter()
    child = subprocess.Popen(
        command, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    assert child.stdout is not None
    peak_tree = 0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak_tree
        while not done.wait(0.5):
            peak_tree = max(peak_tree, _tree_rss(child.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    report = child.stdout.read()
    done.set()
    sampler.join()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        sys.exit(f"import_snapshot failed ({status}): {report}")
    cpu = usage.ru_utime + usage.ru_stime  # the worker processes' too: the child reaped them
    return seconds, usage.ru_maxrss * 1024, report.strip(), peak_tree, cpu


def percentiles(times: list[float]) -> str:
    times = sorted(times)
    p50 = times[len(times) // 2]
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    return f"p50 {p50:6.1f} ms   p95 {p95:6.1f} ms"


def most_prolific_author() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT author->>'name_text', count(*) FROM papers_paper,"
            " jsonb_array_elements(authors) AS author GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        )
        name, papers = cursor.fetchone()
    print(f"most prolific author: {name} ({papers:,} papers)")
    return name


def render_pages(*, author: str, renders: int, live: bool, database: str) -> None:
    import itertools

    from django.conf import settings
    from django.test import Client

    from market.models import Term
    from papers.models import Listing, Paper

    settings.PAGE_CACHE_SECONDS = 0
    term, _ = Term.objects.get_or_create(phrase="consensus")
    # What the ingest worker does after each day (market.signals): the mention trends of every
    # listed term, counted over the whole history, and the term research. Not on a reader's
    # request, so timed apart from the pages.
    from market import research, trends

    for name, count in (("trends", trends.count_all_listed), ("research", research.recount)):
        started = time.perf_counter()
        count()
        print(f"  worker: {name} counted over the history in {time.perf_counter() - started:.1f} s")
    ten_years_ago = dt.date(2016, 12, 2)
    day = (
        Listing.objects.filter(category__code="cs.DC", date__lte=ten_years_ago)
        .order_by("-date")
        .values_list("date", flat=True)
        .first()
    )
    assert day is not None, "no cs.DC listing ten years ago"
    newest = Listing.objects.filter(category__code="cs.DC").order_by("-date", "paper__arxiv_id")
    on_day = Listing.objects.filter(category__code="cs.DC", date=day).order_by("paper__arxiv_id")
    by_author = Paper.objects.by_author(author).newest_first()
    # A paper each page shows, edited before each render: the first reader after a change.
    pages = {
        "category page /list/cs.DC/": ("/list/cs.DC/", newest[0].paper_id),
        f"a day ten years ago /list/cs.DC/{day}/": (f"/list/cs.DC/{day}/", on_day[0].paper_id),
        f"most prolific author /author/{author}/": (f"/author/{author}/", by_author[0].pk),
        f"term page /market/{term.slug}/": (term.get_absolute_url(), None),
    }
    numbers = itertools.count()
    client = Client(HTTP_HOST="testserver")

    def measure(path: str, paper_id: int | None, *, seconds: float = 0) -> str:
        """``renders`` renders after a change and as many warm, or more until ``seconds``."""
        changed: list[float] = []
        warm: list[float] = []
        until = time.monotonic() + seconds
        while len(changed) < renders or time.monotonic() < until:
            if paper_id is not None:
                Paper.objects.filter(pk=paper_id).update(comment=f"{next(numbers)} pages")
            else:
                Term.objects.filter(pk=term.pk).update(description=f"{next(numbers)} notes")
            started = time.perf_counter()
            response = client.get(path)
            changed.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200
            started = time.perf_counter()
            client.get(path)
            warm.append((time.perf_counter() - started) * 1000)
        return (
            f"after a change: {percentiles(changed)}   warm: {percentiles(warm)}"
            f"   ({len(changed)} renders)"
        )

    for label, (path, paper_id) in pages.items():
        assert client.get(path).status_code == 200, path
        print(f"  {label}")
        print(f"    quiet, {measure(path, paper_id)}")
        if live:
            with market_trading(f"{POSTGRES_ADMIN_URL}/{database}") as traded:
                figures = measure(path, paper_id, seconds=LIVE_SECONDS)
            print(f"    live,  {figures}  ({traded()} trades beside it)")


LIVE_SECONDS = 10  # each page rendered at least this long while it trades


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--renders", type=int, default=50)
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--keep", action="store_true", help="keep the scratch database")
    parser.add_argument("--database", default=DATABASE, help="the scratch database's name")
    parser.add_argument("--no-pages", action="store_true", help="skip the page renders")
    parser.add_argument(
        "--reuse-snapshot",
        action="store_true",
        help="keep the snapshot file, and use the one kept by an earlier run if there is one",
    )
    parser.add_argument(
        "--pages-only", action="store_true", help="only the renders, on the kept database"
    )
    parser.add_argument(
        "--live", action="store_true", help="the renders again while another process trades"
    )
    args = parser.parse_args()
    if args.pages_only:
        print(f"load at start: {uptime()}")
        setup_offline_django(f"{POSTGRES_ADMIN_URL}/{args.database}")
        from django.db import connection

        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM papers_paper")
            print(f"papers: {cursor.fetchone()[0]:,}")
        print(f"pages ({args.renders} renders each, in-process, page cache off):")
        render_pages(
            author=most_prolific_author(),
            renders=args.renders,
            live=args.live,
            database=args.database,
        )
        print(f"load at end: {uptime()}")
        return

    print(f"load at start: {uptime()}")
    # A folder per database: two benchmarks of the same size on the machine at once must not
    # write (and delete) each other's file.
    folder = Path("/tmp") / "pr_history_bench" / args.database
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"snapshot-{args.papers}-{args.seed}.json"
    if args.reuse_snapshot and path.exists():
        print(f"snapshot: {args.papers:,} papers, {path.stat().st_size / 1e6:,.0f} MB, reused")
    else:
        started = time.perf_counter()
        write_snapshot(path, papers=args.papers, seed=args.seed)
        print(
            f"snapshot: {args.papers:,} papers, {path.stat().st_size / 1e6:,.0f} MB written in "
            f"{time.perf_counter() - started:.0f} s"
        )

    url = scratch_database(args.database)
    setup_offline_django(url)
    env = {**os.environ, "DATABASE_URL": url, "REDIS_URL": "", "DJANGO_DEBUG": "0"}
    env.setdefault("DJANGO_SECRET_KEY", "benchmark-only-secret-key-" + "x" * 40)

    seconds, peak, report, tree, cpu = run_import(path, env)
    print(
        f"import:  {seconds:7.1f} s  {args.papers / seconds:7.0f} papers/s  "
        f"peak {peak / 2**20:.0f} MB (largest process), {tree / 2**20:.0f} MB (all its processes)"
        f"; Python CPU {cpu:.0f} s"
    )
    print(f"         {report}")
    print(f"load after import: {uptime()}")
    again, again_peak, report, tree, cpu = run_import(path, env)
    print(
        f"re-run:  {again:7.1f} s  {args.papers / again:7.0f} records/s  peak "
        f"{again_peak / 2**20:.0f} MB (largest process), {tree / 2**20:.0f} MB (all its processes)"
        f"; Python CPU {cpu:.0f} s"
    )
    print(f"         {report}")

    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        print(f"database size: {cursor.fetchone()[0]}")
        cursor.execute("SELECT count(*) FROM papers_paper")
        papers = cursor.fetchone()[0]
        cursor.execute("SELECT count(*) FROM papers_listing")
        print(f"papers: {papers:,}   listings: {cursor.fetchone()[0]:,}")
    if not args.no_pages:
        print(f"pages ({args.renders} renders each, in-process, page cache off):")
        render_pages(
            author=most_prolific_author(),
            renders=args.renders,
            live=args.live,
            database=args.database,
        )
    print(f"load at end: {uptime()}")
    if not args.reuse_snapshot:
        path.unlink()
    if not args.keep:
        connection.close()
        import psycopg

        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{args.database}" WITH (FORCE)')


if __name__ == "__main__":
    main()
