"""Dividends: every share of a term earns for each newly announced paper that mentions it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import override_settings

from market import tasks, trading
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import DividendEvent, Mention
from papers.models import Category, Listing, Paper
from tests.market.state import held_before_the_announcement

DAY = dt.date(2025, 10, 2)
DIVIDEND = 50_000


def announce(category, arxiv_id, title, abstract, kind="new", date=DAY, hidden=False) -> Paper:
    paper, _ = Paper.objects.get_or_create(
        arxiv_id=arxiv_id,
        defaults={
            "title": title,
            "abstract": abstract,
            "primary_category": category.code,
            "hidden": hidden,
        },
    )
    Listing.objects.create(category=category, paper=paper, date=date, announce_type=kind)
    return paper


@pytest.fixture
def day(cs_dc):
    """Three mentioning papers (M = 3) among others that must not pay."""
    announce(cs_dc, "2510.00001", "Paging the KV cache", "We page it.")
    announce(cs_dc, "2510.00002", "Serving", "KV caches, KV caches everywhere.", kind="cross")
    announce(cs_dc, "2510.00003", "Offloading", "Moving the KV-cache to CPU memory.")
    announce(cs_dc, "2510.00004", "Raft", "Nothing about caches here.")
    announce(cs_dc, "2510.00005", "Old news", "A KV cache revisited.", kind="replace")
    announce(cs_dc, "2510.00006", "Withdrawn", "A KV cache spam.", hidden=True)
    announce(cs_dc, "2510.00007", "Tomorrow", "A KV cache later.", date=DAY + dt.timedelta(1))
    return cs_dc


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_holders_earn_mentions_times_shares_times_dividend_once(day, trader, rival, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=12, max_cost=None, key="t")
    trading.buy(user=rival, term=kv_cache, shares=5, max_cost=None, key="r")
    held_before_the_announcement(DAY)
    trader_before, rival_before = trading.balance(trader), trading.balance(rival)

    summary = pay_dividends_for_day(category=day, date=DAY)

    assert trading.balance(trader) == trader_before + 3 * 12 * DIVIDEND
    assert trading.balance(rival) == rival_before + 3 * 5 * DIVIDEND
    assert summary.amount == 3 * 17 * DIVIDEND and summary.papers_paid == 3
    assert Mention.objects.filter(term=kv_cache).count() == 3
    assert DividendEvent.objects.filter(term=kv_cache).count() == 3
    assert check_ledger().ok

    again = pay_dividends_for_day(category=day, date=DAY)
    assert again.amount == 0
    assert trading.balance(trader) == trader_before + 3 * 12 * DIVIDEND
    assert Mention.objects.count() == 3 and DividendEvent.objects.count() == 3
    assert check_ledger().ok


def test_the_celery_task_pays_and_a_cross_list_elsewhere_pays_no_more(day, trader, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="t")
    held_before_the_announcement(DAY)
    before = trading.balance(trader)
    result = tasks.pay_dividends.delay(day.pk, DAY.isoformat()).get()
    assert result["amount"] == 3 * 2 * 50_000
    # The same paper cross-listed in another category on the same day pays nothing more.
    cs_lg, _ = Category.objects.get_or_create(
        code="cs.LG", defaults={"name": "Machine Learning", "archive_code": "cs"}
    )
    Listing.objects.create(
        category=cs_lg,
        paper=Paper.objects.get(arxiv_id="2510.00001"),
        date=DAY,
        announce_type="cross",
    )
    tasks.pay_dividends(cs_lg.pk, DAY.isoformat())
    assert trading.balance(trader) == before + 3 * 2 * 50_000


def test_mentions_are_recorded_even_when_nobody_holds_shares(day, kv_cache):
    summary = pay_dividends_for_day(category=day, date=DAY)
    assert summary.amount == 0
    assert Mention.objects.filter(term=kv_cache).count() == 3
    assert check_ledger().ok


def test_halted_terms_do_not_pay(day, trader, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="t")
    kv_cache.__class__.objects.filter(pk=kv_cache.pk).halt(reason="review")
    before = trading.balance(trader)
    assert pay_dividends_for_day(category=day, date=DAY).amount == 0
    assert trading.balance(trader) == before


def test_an_announced_day_pays_its_dividends_through_the_signal(day, trader, kv_cache):
    """The ingest sends papers.signals.listings_announced after its commit; the market pays."""
    from papers.signals import listings_announced

    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="t")
    held_before_the_announcement(DAY)
    before = trading.balance(trader)
    listings_announced.send(sender=Category, category=day, date=DAY)
    listings_announced.send(sender=Category, category=day, date=DAY)  # a retry pays no more
    assert trading.balance(trader) == before + 3 * 2 * 50_000
    assert check_ledger().ok
