"""Nightly dumps for people who analyse the market: every trade, each term's closing price
and supply per UTC day, every dividend with its paper, as gzip JSON Lines, with each file's
size and SHA-256 recorded (``Dump``) and listed at ``/api/v1/dumps``.

A dump holds everything up to the end of its UTC day. Rows are read in primary-key chunks,
not through a server-side cursor: behind a transaction-mode pooler nothing may outlive a
transaction (docs/architecture.md), and a chunk is one short query. A file is written beside
its final name and renamed into place only once complete and hashed, so a reader never
fetches half a file, and a dump made again for the same day replaces the old one whole.
Private traders are ``null`` in the trades, as everywhere in public.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from market import public_names
from market.models import DividendEvent, Term, Trade

from .models import Dump

CHUNK = 5_000
KEEP_DAYS = 7


def dumps_dir() -> Path:
    return Path(settings.API_DUMPS_DIR)


def _end_of(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day + dt.timedelta(days=1), dt.time(0), tzinfo=dt.UTC)


def _chunks(fetch: Callable[[int], list[tuple[int, dict[str, Any]]]]) -> Iterator[dict[str, Any]]:
    after = 0
    while True:
        rows = fetch(after)
        if not rows:
            return
        for _, row in rows:
            yield row
        after = rows[-1][0]


def trades(day: dt.date) -> Iterator[dict[str, Any]]:
    def fetch(after: int) -> list[tuple[int, dict[str, Any]]]:
        found = (
            Trade.objects.filter(pk__gt=after, created_at__lt=_end_of(day))
            .select_related("term", "account__user")
            .annotate(private=public_names.is_private('"market_account"."user_id"'))
            .order_by("pk")[:CHUNK]
        )
        return [
            (
                trade.pk,
                {
                    "id": trade.pk,
                    "term": trade.term.slug,
                    "at": trade.created_at.isoformat(),
                    "trader": None
                    if trade.private or trade.account.user is None
                    else trade.account.user.get_username(),
                    "side": trade.side,
                    "shares": trade.shares,
                    "amount": trade.amount,
                    "fee": trade.fee,
                    "price_before": trade.price_before,
                    "price_after": trade.price_after,
                    "supply_after": trade.supply_after,
                },
            )
            for trade in found
        ]

    return _chunks(fetch)


# Each term's last trade of each UTC day: its closing price and supply.
_CLOSES_SQL = """
SELECT DISTINCT ON (t.term_id, (t.created_at AT TIME ZONE 'UTC')::date)
       m.slug, (t.created_at AT TIME ZONE 'UTC')::date, t.price_after, t.supply_after
FROM market_trade AS t JOIN market_term AS m ON m.id = t.term_id
WHERE t.term_id = ANY(%s) AND t.created_at < %s
ORDER BY t.term_id, (t.created_at AT TIME ZONE 'UTC')::date, t.term_version DESC
"""
TERMS_A_CHUNK = 200


def prices(day: dt.date) -> Iterator[dict[str, Any]]:
    after = 0
    while True:
        ids = list(
            Term.objects.filter(pk__gt=after)
            .order_by("pk")
            .values_list("pk", flat=True)[:TERMS_A_CHUNK]
        )
        if not ids:
            return
        with connection.cursor() as cursor:
            cursor.execute(_CLOSES_SQL, [ids, _end_of(day)])
            rows = cursor.fetchall()
        for slug, date, price, supply in rows:
            yield {"term": slug, "date": date.isoformat(), "close": price, "supply": supply}
        after = ids[-1]


def dividends(day: dt.date) -> Iterator[dict[str, Any]]:
    def fetch(after: int) -> list[tuple[int, dict[str, Any]]]:
        found = (
            DividendEvent.objects.filter(pk__gt=after, created_at__lt=_end_of(day))
            .select_related("term", "paper")
            .only(
                "pk",
                "date",
                "per_share",
                "shares",
                "term__slug",
                "paper__arxiv_id",
                "paper__hidden",
            )
            .order_by("pk")[:CHUNK]
        )
        return [
            (
                event.pk,
                {
                    "id": event.pk,
                    "term": event.term.slug,
                    "paper": event.paper.arxiv_id,
                    "date": event.date.isoformat(),
                    "per_share": event.per_share,
                    "shares": event.shares,
                    "amount": event.amount,
                },
            )
            for event in found
            if not event.paper.hidden
        ]

    return _chunks(fetch)


KINDS: dict[str, Callable[[dt.date], Iterator[dict[str, Any]]]] = {
    Dump.Kind.TRADES: trades,
    Dump.Kind.PRICES: prices,
    Dump.Kind.DIVIDENDS: dividends,
}


def write_dump(*, kind: str, day: dt.date) -> Dump:
    """Write the ``kind`` dump up to ``day`` and record it; the same day again replaces it."""
    directory = dumps_dir()
    directory.mkdir(parents=True, exist_ok=True)
    name = f"{kind}-{day:%Y-%m-%d}.jsonl.gz"
    final = directory / name
    partial = directory / f".{name}.{os.getpid()}.partial"
    count = 0
    with open(partial, "wb") as raw:
        # mtime 0: the same rows make the same bytes, so a re-run's checksum matches.
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed:
            for row in KINDS[kind](day):
                packed.write(json.dumps(row, separators=(",", ":")).encode() + b"\n")
                count += 1
        raw.flush()
        os.fsync(raw.fileno())
    digest = hashlib.sha256()
    with open(partial, "rb") as written:
        for block in iter(lambda: written.read(1 << 20), b""):
            digest.update(block)
    size = partial.stat().st_size
    os.replace(partial, final)
    dump, _ = Dump.objects.update_or_create(
        kind=kind,
        day=day,
        defaults={"file_name": name, "rows": count, "size": size, "sha256": digest.hexdigest()},
    )
    return dump


def make_dumps(*, day: dt.date) -> list[Dump]:
    """Every kind's dump up to ``day``, and the dumps older than ``KEEP_DAYS`` days gone."""
    made = [write_dump(kind=kind, day=day) for kind in KINDS]
    for old in Dump.objects.filter(day__lt=day - dt.timedelta(days=KEEP_DAYS)):
        (dumps_dir() / old.file_name).unlink(missing_ok=True)
        old.delete()
    return made
