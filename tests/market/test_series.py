"""Price series: steps a bucket, the closed buckets kept and the open one read from the latest
trade, so that a page made again after a trade reads no history."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from market import series, stats
from market.models import Term
from tests.factories import announce, buy

pytestmark = pytest.mark.django_db


def test_market_terms_and_sparklines_cost_the_same_queries_however_many_terms(trader, cs_dc):
    for n in range(12):
        term = Term.objects.create(phrase=f"term {n}")
        buy(trader, term, n + 1)
        announce(term, date=dt.date(2026, 10, 1), category=cs_dc)
    with CaptureQueriesContext(connection) as queries:
        terms = list(stats.market_terms(sort="mentions", descending=True, now=timezone.now()))
        lines = series.sparklines(terms=terms, now=timezone.now())
    assert len(terms) == len(lines) == 12
    assert len(queries) == 3  # the terms, their closed hours, their latest trades
    # The closed hours are kept: a trade since reads only the latest trades again.
    buy(trader, term, 1)
    with CaptureQueriesContext(connection) as queries:
        again = series.sparklines(terms=terms, now=timezone.now())
    assert len(queries) == 1
    assert again[term.pk][-2][1] == term.p0 + 13 * term.k  # that trade's price, in the open hour


def test_sparklines_step_through_the_week_one_point_an_hour(trader, kv_cache, raft):
    now = timezone.now().replace(minute=30)
    buy(trader, kv_cache, 10, when=now - dt.timedelta(days=9))
    buy(trader, kv_cache, 1, when=now - dt.timedelta(days=2, minutes=5))
    buy(trader, kv_cache, 1, when=now - dt.timedelta(hours=5, minutes=20))
    last_in_hour = buy(trader, kv_cache, 1, when=now - dt.timedelta(hours=5, minutes=10))
    terms = list(stats.market_terms(now=now))
    lines = series.sparklines(terms=terms, now=now)

    since = now - dt.timedelta(days=7)
    price = lambda n: kv_cache.p0 + n * kv_cache.k  # noqa: E731
    assert lines[kv_cache.pk] == [
        (since, price(10)),
        (now - dt.timedelta(days=2, minutes=5), price(11)),
        (now - dt.timedelta(hours=5, minutes=10), price(13)),
        (now, price(13)),
    ]
    assert last_in_hour.price_after == price(13)
    assert lines[raft.pk] == [(since, raft.p0), (now, raft.p0)]


def test_price_history_runs_from_listing_to_now(trader, kv_cache):
    now = timezone.now()
    created = now - dt.timedelta(days=3)
    Term.objects.filter(pk=kv_cache.pk).update(created_at=created)
    buy(trader, kv_cache, 5, when=now - dt.timedelta(days=2))
    buy(trader, kv_cache, 5, when=now - dt.timedelta(days=1))
    term = Term.objects.get(pk=kv_cache.pk)
    history = series.price_history(term=term, now=now)
    assert history == [
        (created, term.p0),
        (now - dt.timedelta(days=2), term.p0 + 5 * term.k),
        (now - dt.timedelta(days=1), term.p0 + 10 * term.k),
        (now, term.price),
    ]


def test_price_history_of_an_old_term_has_a_point_a_day(trader, kv_cache):
    now = timezone.now().replace(hour=12)
    Term.objects.filter(pk=kv_cache.pk).update(created_at=now - dt.timedelta(days=60))
    buy(trader, kv_cache, 1, when=now - dt.timedelta(days=20, hours=3))
    buy(trader, kv_cache, 1, when=now - dt.timedelta(days=20, hours=1))
    buy(trader, kv_cache, 1, when=now - dt.timedelta(days=2))
    history = series.price_history(term=Term.objects.get(pk=kv_cache.pk), now=now)
    assert [price for _, price in history] == [
        kv_cache.p0,
        kv_cache.p0 + 2 * kv_cache.k,  # the later of the two trades that day
        kv_cache.p0 + 3 * kv_cache.k,
        kv_cache.p0 + 3 * kv_cache.k,
    ]


def test_a_trade_after_the_closed_hours_were_kept_ends_the_line_at_its_time(trader, kv_cache):
    now = timezone.now()
    buy(trader, kv_cache, 3, when=now - dt.timedelta(days=2))
    terms = list(stats.market_terms(now=now))
    series.sparklines(terms=terms, now=now)  # the closed hours are kept from here on
    latest = buy(trader, kv_cache, 2)
    later = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        lines = series.sparklines(terms=list(stats.market_terms(now=later)), now=later)
    assert len(queries) == 2  # the terms and their latest trades; no closed hour read again
    assert lines[kv_cache.pk][-2:] == [
        (latest.created_at, kv_cache.p0 + 5 * kv_cache.k),
        (later, kv_cache.p0 + 5 * kv_cache.k),
    ]
    assert (now - dt.timedelta(days=2), kv_cache.p0 + 3 * kv_cache.k) in lines[kv_cache.pk]


def test_the_week_window_drops_hours_that_slid_out_of_it(trader, kv_cache):
    now = timezone.now().replace(minute=10)
    buy(trader, kv_cache, 1, when=now - dt.timedelta(days=7, minutes=-20))  # in the window
    terms = list(stats.market_terms(now=now))
    assert len(series.sparklines(terms=terms, now=now)[kv_cache.pk]) == 3
    later = now + dt.timedelta(minutes=30)  # the same open hour: the kept closed hours serve
    line = series.sparklines(terms=list(stats.market_terms(now=later)), now=later)[kv_cache.pk]
    assert [price for _, price in line] == [kv_cache.p0 + kv_cache.k] * 2


def test_a_line_drawn_at_the_end_of_an_hour_keeps_that_hour_open(trader, kv_cache):
    # The market table draws its lines at the end of the clock bucket it is kept for, so in
    # an hour's last seconds ``now`` is the next hour's first instant: every trade in the
    # bucket is before it, and the hour they are in is still taking trades.
    end = timezone.now().replace(minute=0, second=0, microsecond=0)
    buy(trader, kv_cache, 1, when=end - dt.timedelta(seconds=25))
    series.sparklines(terms=list(stats.market_terms(now=end)), now=end)
    last = buy(trader, kv_cache, 1, when=end - dt.timedelta(seconds=5))
    line = series.sparklines(terms=list(stats.market_terms(now=end)), now=end)[kv_cache.pk]
    assert line[-2:] == [
        (last.created_at, kv_cache.p0 + 2 * kv_cache.k),
        (end, kv_cache.p0 + 2 * kv_cache.k),
    ]
