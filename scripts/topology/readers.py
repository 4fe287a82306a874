"""Checks of reading: cold readers over every term page, anonymous reads served by the
replica, and a trader reading their own writes."""

from __future__ import annotations

import collections
import html
import re
import statistics
import time
from typing import Any

from market.models import Mention, Term
from papers.models import IngestRun, Paper
from tests.processes import HttpsClient

from .common import (
    DAY_ONE,
    PROXY,
    READERS,
    WEB1,
    WEB2,
    Result,
    all_signed_in,
    buy,
    committed_transactions,
    counter_text,
    flush_cache,
    on,
    read_all,
    replica_lag,
    server_errors,
    shares_on_portfolio,
    signed_in,
    wait_until,
)

# --------------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------------


def check_readers_cold() -> Result:
    """8 concurrent readers over every term page with nothing counted or kept yet (the trend
    count runs on the spot), and the same over list, paper, search, author, market and
    portfolio pages: no 5xx."""
    flush_cache()
    terms = list(Term.objects.listed().values_list("slug", flat=True))
    papers = list(Paper.objects.values_list("arxiv_id", flat=True))
    days = sorted({str(d) for d in IngestRun.objects.values_list("date", flat=True) if d})
    words = ["consensus", "cache", "GPU", "scheduling", "federated learning", "latency"]
    # Author pages as readers reach them: the links on the listing's pages.
    listing = HttpsClient(PROXY)
    authors = sorted(
        {
            link
            for day in days
            for link in re.findall(
                r'href="(/author/[^"]+)"', listing.get(f"/list/cs.DC/{day}/").text
            )
        }
    )
    groups = {
        "term": [f"/market/{slug}/" for slug in terms],
        "list": ["/list/cs.DC/", *[f"/list/cs.DC/{day}/" for day in days]],
        "paper": [f"/abs/{arxiv_id}/" for arxiv_id in papers],
        "search": [f"/search/?q={word}" for word in words],
        "author": [html.unescape(link) for link in authors[:24]],
        "market": ["/market/", "/market/?sort=-price", "/market/?sort=traded", "/leaderboard/"],
        "portfolio": ["/portfolio/"],
    }
    anonymous = [HttpsClient(PROXY) for _ in range(READERS)]
    members = all_signed_in([f"reader{n}" for n in range(READERS)])
    figures: dict[str, Any] = {}
    failed = 0
    for group, paths in groups.items():
        clients = members if group == "portfolio" else anonymous
        started = time.monotonic()
        statuses, seconds = read_all(paths * (4 if group == "portfolio" else 1), clients)
        bad = server_errors(statuses)
        failed += bad
        figures[group] = (
            f"{sum(statuses.values())} req {counter_text(statuses)} 5xx={bad} "
            f"p50={statistics.median(seconds) * 1000:.0f}ms max={max(seconds) * 1000:.0f}ms "
            f"in {time.monotonic() - started:.1f}s"
        )
    return Result("readers_cold", failed == 0, figures)


def check_replica_reads() -> Result:
    """With DATABASE_REPLICA_URL set, anonymous reader GETs are served by the replica: its own
    pg_stat_database counts their transactions."""
    reader = HttpsClient(PROXY)
    slugs = list(Term.objects.listed().values_list("slug", flat=True)[:10])
    papers = list(Paper.objects.values_list("arxiv_id", flat=True)[:10])
    paths = ["/list/cs.DC/", "/market/", *[f"/market/{s}/" for s in slugs]]
    paths += [f"/abs/{p}/" for p in papers]
    paths = (paths * 4)[:100]
    before_replica = committed_transactions("REPLICA_URL")
    before_primary = committed_transactions("PRIMARY_URL")
    statuses = collections.Counter(reader.get(path).status_code for path in paths)
    # Backends report their counts when idle, at most every second (PostgreSQL 15 flushes an
    # idle backend's pending statistics within about ten seconds).
    rise, polls = 0, 0

    def risen() -> bool:
        nonlocal rise, polls
        polls += 1  # each poll is a transaction on the replica too
        rise = committed_transactions("REPLICA_URL") - before_replica - polls
        return rise >= len(paths)

    wait_until(risen, timeout=15, every=1)
    primary_rise = committed_transactions("PRIMARY_URL") - before_primary - 1
    figures = {
        "GETs": f"{len(paths)} {counter_text(statuses)}",
        "replica xact_commit rise": rise,
        "primary xact_commit rise (workers included)": primary_rise,
        "replica lag": replica_lag(),
    }
    return Result("replica_reads", rise >= len(paths) and statuses == {200: len(paths)}, figures)


def quiet_terms() -> list[str]:
    """Terms the checks' own (future) days do not mention. Later checks trade only these: a
    trade made now counts as held at a future announcement, so trading a mentioned term after
    its dividend was paid would break the ledger's rule for that payout (check_ledger), which
    a day announced in the past, as every real one is, never can."""
    mentioned = Mention.objects.filter(date__gte=DAY_ONE).values("term_id")
    slugs = list(
        Term.objects.listed()
        .exclude(pk__in=mentioned)
        .order_by("slug")
        .values_list("slug", flat=True)
    )
    return slugs or list(Term.objects.listed().order_by("slug").values_list("slug", flat=True))


def check_read_your_writes(rounds: int = 100) -> Result:
    """A trade on one instance, then at once the portfolio on the other: the trade shows, every
    time, although the replica is a second behind."""
    trader = signed_in("ryw-trader", WEB1)
    instances = [trader, on(trader, WEB2)]
    slug = quiet_terms()[0]
    start = shares_on_portfolio(instances[1].get("/portfolio/").text, slug) or 0
    shown = 0
    trade_statuses: collections.Counter = collections.Counter()
    misses: list[str] = []
    for n in range(1, rounds + 1):
        writer, reader = instances[n % 2], instances[(n + 1) % 2]
        response = buy(writer, slug)
        trade_statuses[response.status_code] += 1
        seen = shares_on_portfolio(reader.get("/portfolio/").text, slug)
        if seen == start + n:
            shown += 1
        elif len(misses) < 5:
            misses.append(f"round {n}: portfolio showed {seen}, expected {start + n}")
    figures = {
        "shown at once": f"{shown}/{rounds}",
        "trades": counter_text(trade_statuses),
        "replica lag": replica_lag(),
    }
    return Result("read_your_writes", shown == rounds, figures, misses)
