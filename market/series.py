"""A term's price over time, as steps with at most one point a bucket (an hour or a day).

A closed bucket cannot change: trades are made now, never in the past. So each term's points
in the buckets before the open one are kept (``keep``, under the term, the bucket size and the
open bucket's start), read once a bucket however often the term trades, and the open bucket's
point is the term's latest trade, which the caller has in hand (a market row's figures, a term
page's recent trades) or which one query reads. Right after a trade a page then draws the
term's line without reading its history, which grows with every trade the term ever had.

A trade whose transaction began before a bucket closed and commits after the closed buckets
were first read is missing from them until the next bucket opens: a step drawn at most a
bucket late on a chart that ends at the right price, for milliseconds' worth of trades a bucket.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal, Protocol

from django.db.models import Max
from django.db.models.functions import Trunc
from django.utils import timezone

from peerrevenue import keep

from .models import Term, Trade

Point = tuple[dt.datetime, int]  # (time, µ¢)
Series = list[Point]
Bucket = Literal["hour", "day"]

SPARKLINE_DAYS = 7
# Beyond this age a term's chart has one point a day instead of one an hour.
HOURLY_CHART_MAX_AGE = dt.timedelta(days=14)


def bucket_start(at: dt.datetime, bucket: Bucket) -> dt.datetime:
    """The start of the bucket ``at`` falls in, in the current time zone (as ``Trunc``)."""
    local = timezone.localtime(at)
    if bucket == "hour":
        return local.replace(minute=0, second=0, microsecond=0)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def open_bucket_start(now: dt.datetime, bucket: Bucket) -> dt.datetime:
    """The start of the bucket still taking trades when a line ends at ``now``.

    ``now`` may be the end of a clock bucket (``tickers.bucket_time``) rather than the wall
    clock: every trade drawn is before it, so at an hour's end the open bucket is the hour
    ending there, not the one it starts."""
    return bucket_start(now - dt.timedelta(microseconds=1), bucket)


def _last_trades(
    *, term_ids: Sequence[int], since: dt.datetime, until: dt.datetime, bucket: Bucket
) -> dict[int, Series]:
    """Each term's last trade in each bucket with a trade after ``since`` and before ``until``.

    Per term, trades are serialised by the term's row lock, so the highest id in a bucket is
    the last trade in it.
    """
    last_ids = (
        Trade.objects.filter(term_id__in=term_ids, created_at__gt=since, created_at__lt=until)
        .annotate(bucket=Trunc("created_at", bucket))
        .order_by()
        .values("term_id", "bucket")
        .annotate(last_id=Max("id"))
        .values("last_id")
    )
    found: dict[int, Series] = {pk: [] for pk in term_ids}
    rows = (
        Trade.objects.filter(id__in=last_ids)
        .order_by("term_id", "term_version")
        .values_list("term_id", "created_at", "price_after")
    )
    for term_id, at, price in rows:
        found[term_id].append((at, price))
    return found


def _closed(
    *, term_ids: Iterable[int], bucket: Bucket, now: dt.datetime, since: Mapping[int, dt.datetime]
) -> dict[int, Series]:
    """Each term's points in the closed buckets after its ``since``: kept, and for the terms
    kept nowhere, one query."""
    open_start = open_bucket_start(now, bucket)
    names = {pk: keep.key("price-steps", pk, bucket, open_start, since[pk]) for pk in term_ids}

    def make(missing: list[int]) -> dict[int, Series]:
        read = _last_trades(
            term_ids=missing,
            since=min(since[pk] for pk in missing),
            until=open_start,
            bucket=bucket,
        )
        return {pk: [(at, price) for at, price in read[pk] if at > since[pk]] for pk in missing}

    return keep.get_or_make_many(names, make, size=lambda points: len(points) + 1)


def latest_trades(term_ids: Sequence[int]) -> dict[int, Point | None]:
    """Each term's latest trade (time, price after), or None for a term never traded."""
    found: dict[int, Point | None] = dict.fromkeys(term_ids)
    rows = (
        Trade.objects.filter(term_id__in=term_ids)
        .order_by("term_id", "-term_version")
        .distinct("term_id")
        .values_list("term_id", "created_at", "price_after")
    )
    for term_id, at, price in rows:
        found[term_id] = (at, price)
    return found


def _open(latest: Point | None, *, bucket: Bucket, now: dt.datetime, after: dt.datetime) -> Series:
    """The open bucket's point: the latest trade, if it was made in it (and after ``after``)."""
    if latest is None or latest[0] < open_bucket_start(now, bucket) or latest[0] <= after:
        return []
    return [latest]


class PricedThenAndNow(Protocol):
    @property
    def pk(self) -> int: ...
    @property
    def price_7d(self) -> int: ...
    @property
    def price_now(self) -> int: ...


def sparklines(
    *,
    terms: Iterable[PricedThenAndNow],
    now: dt.datetime,
    latest: Mapping[int, Point | None] | None = None,
) -> dict[int, Series]:
    """Each term's price over the last week as (time, µ¢) steps, from a week ago to ``now``,
    at most one point an hour.

    ``terms`` carry ``price_7d`` and ``price_now`` (a market row's figures); ``latest`` is
    each term's latest trade, read here when not given.
    """
    terms = list(terms)
    if not terms:
        return {}
    since = now - dt.timedelta(days=SPARKLINE_DAYS)
    ids = [term.pk for term in terms]
    # Kept per open hour: as the week's window slides within the hour, its first few points
    # are dropped here rather than read again.
    floor = open_bucket_start(now, "hour") - dt.timedelta(days=SPARKLINE_DAYS, hours=1)
    closed = _closed(term_ids=ids, bucket="hour", now=now, since=dict.fromkeys(ids, floor))
    if latest is None:
        latest = latest_trades(ids)
    return {
        term.pk: [
            (since, term.price_7d),
            *[(at, price) for at, price in closed[term.pk] if at > since],
            *_open(latest.get(term.pk), bucket="hour", now=now, after=since),
            (now, term.price_now),
        ]
        for term in terms
    }


def price_history(
    *, term: Term, now: dt.datetime, latest: Mapping[int, Point | None] | None = None
) -> Series:
    """The term's price since it was created, as (time, µ¢) steps ending at ``now``: a point
    an hour for a young term, a day for an older one. ``latest`` is its latest trade by the
    term's id (None: never traded), read here when not given."""
    start = min(term.created_at, now)
    bucket: Bucket = "hour" if now - start <= HOURLY_CHART_MAX_AGE else "day"
    since = start - dt.timedelta(seconds=1)
    closed = _closed(term_ids=[term.pk], bucket=bucket, now=now, since={term.pk: since})
    if latest is None:
        latest = latest_trades([term.pk])
    # Created with no shares out: its first price was p0.
    return [
        (start, term.p0),
        *closed[term.pk],
        *_open(latest.get(term.pk), bucket=bucket, now=now, after=since),
        (now, term.price),
    ]
