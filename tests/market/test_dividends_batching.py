"""Dividends for a day in bulk: the queries do not grow with the papers or the unheld terms.

The day's texts are read once, the mentions inserted in one statement, and the terms nobody
holds are recorded together under their locks; each held term still pays in its own
transaction. The money and the exactly-once record are those of ``pay_dividend``.
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from market import dividends, trading
from market.dividends import DividendSummary, pay_dividends_for_day
from market.ledger import check_ledger
from market.models import DividendEvent, Mention, Term
from papers.models import Listing, Paper
from tests.market.state import held_before_the_announcement

pytestmark = pytest.mark.django_db

DAY = dt.date(2025, 10, 2)
NEXT_DAY = dt.date(2025, 10, 3)
DIVIDEND = 50_000


def announce(category, papers: int, *, first: int = 1, date: dt.date = DAY) -> list[Paper]:
    """`papers` new papers mentioning every term below (in the title or in the abstract)."""
    made = []
    for n in range(first, first + papers):
        paper = Paper.objects.create(
            arxiv_id=f"2510.{n:05d}",
            title="Paging the KV cache",
            abstract="Raft logs and sharding; gossip with erasure coding.",
            primary_category=category.code,
        )
        Listing.objects.create(category=category, paper=paper, date=date, announce_type="new")
        made.append(paper)
    return made


PHRASES = ["KV cache", "Raft", "sharding", "gossip", "erasure coding"]


def make_terms(count: int, *, skip: int = 0) -> list[Term]:
    return [Term.objects.create(phrase=phrase) for phrase in PHRASES[skip : skip + count]]


def pay(category, date: dt.date = DAY) -> tuple[DividendSummary, int]:
    with CaptureQueriesContext(connection) as queries:
        summary = pay_dividends_for_day(category=category, date=date)
    return summary, len(queries)


def test_the_queries_do_not_grow_with_the_papers_or_the_unheld_terms(cs_dc):
    make_terms(2)
    announce(cs_dc, 3)
    few, few_queries = pay(cs_dc)

    make_terms(3, skip=2)
    announce(cs_dc, 27, first=100, date=NEXT_DAY)
    many, many_queries = pay(cs_dc, NEXT_DAY)

    assert (few.papers_scanned, few.mentions) == (3, 2 * 3)
    assert (many.papers_scanned, many.mentions) == (27, 5 * 27)
    assert few_queries == many_queries <= 12
    assert DividendEvent.objects.count() == 2 * 3 + 5 * 27
    assert set(DividendEvent.objects.values_list("shares", flat=True)) == {0}
    assert not DividendEvent.objects.filter(transaction__isnull=False).exists()


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_held_and_unheld_terms_in_one_day(cs_dc, trader, rival):
    kv, raft, sharding = make_terms(3)
    announce(cs_dc, 4)
    trading.buy(user=trader, term=kv, shares=12, max_cost=None, key="t1")
    trading.buy(user=rival, term=kv, shares=5, max_cost=None, key="r1")
    trading.buy(user=rival, term=sharding, shares=3, max_cost=None, key="r2")
    held_before_the_announcement(DAY)
    trader_before, rival_before = trading.balance(trader), trading.balance(rival)

    summary = pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == trader_before + 4 * 12 * DIVIDEND
    assert trading.balance(rival) == rival_before + 4 * (5 + 3) * DIVIDEND
    assert summary.amount == 4 * (17 + 3) * DIVIDEND
    assert [(p.term_id, p.papers, p.shares) for p in summary.payouts] == [
        (kv.pk, 4, 17),
        (raft.pk, 4, 0),
        (sharding.pk, 4, 3),
    ]
    events = DividendEvent.objects.filter(term=raft)
    assert events.count() == 4 and {e.shares for e in events} == {0}
    assert {e.transaction_id for e in events} == {None}
    assert {e.category_id for e in events} == {cs_dc.pk} and {e.date for e in events} == {DAY}
    assert {e.per_share for e in events} == {DIVIDEND}
    assert check_ledger().ok

    # Exactly once: a later buyer of the unheld term earns nothing for papers already counted.
    trading.buy(user=trader, term=raft, shares=7, max_cost=None, key="t2")
    before = trading.balance(trader)
    again = pay_dividends_for_day(category=cs_dc, date=DAY)
    assert again.amount == 0 and again.papers_paid == 0
    assert trading.balance(trader) == before
    assert DividendEvent.objects.count() == 12 and Mention.objects.count() == 12
    assert check_ledger().ok


def test_each_held_term_costs_a_fixed_number_of_extra_queries(cs_dc, trader):
    terms = make_terms(5)
    announce(cs_dc, 5)
    trading.buy(user=trader, term=terms[0], shares=2, max_cost=None, key="a")
    held_before_the_announcement(DAY)
    _summary, one_held = pay(cs_dc)

    Mention.objects.all().delete()
    DividendEvent.objects.all().delete()
    trading.buy(user=trader, term=terms[1], shares=2, max_cost=None, key="b")
    held_before_the_announcement(DAY)
    _summary, two_held = pay(cs_dc)

    # One pay_dividend transaction for the second term: 13 statements, one of them the lock on
    # the papers' rows taken apart from the read of their verified authors (market/withholding.py).
    assert 0 < two_held - one_held <= 13


def test_halted_terms_are_neither_paid_nor_recorded(cs_dc, trader):
    kv, raft = make_terms(2)
    announce(cs_dc, 2)
    trading.buy(user=trader, term=kv, shares=2, max_cost=None, key="t")
    # Halted after the matcher was built: it still finds the term, the payout must not pay.
    from market import highlighting

    highlighting.current_matcher()
    Term.objects.filter(pk__in=[kv.pk, raft.pk]).update(status=Term.Status.HALTED)
    before = trading.balance(trader)

    payouts = dividends.pay_dividends_for_terms(
        paper_ids_by_term={kv.pk: [1, 2], raft.pk: [1, 2]},
        per_share=DIVIDEND,
        date=DAY,
        category=cs_dc,
    )

    assert [(p.term_id, p.papers, p.amount) for p in payouts] == [(kv.pk, 0, 0), (raft.pk, 0, 0)]
    assert trading.balance(trader) == before
    assert not DividendEvent.objects.exists()


def test_the_terms_are_locked_in_id_order_before_anything_is_recorded(cs_dc):
    make_terms(4)
    announce(cs_dc, 2)
    with CaptureQueriesContext(connection) as queries:
        pay_dividends_for_day(category=cs_dc, date=DAY)
    statements = [query["sql"] for query in queries.captured_queries]
    lock = next(
        i
        for i, sql in enumerate(statements)
        if sql.startswith('SELECT "market_term"') and "FOR UPDATE" in sql
    )
    assert 'ORDER BY "market_term"."id" ASC' in statements[lock]
    record = next(
        i
        for i, sql in enumerate(statements)
        if sql.startswith('INSERT INTO "market_dividendevent"')
    )
    assert lock < record


def test_a_bad_dividend_is_refused_before_anything_is_locked(cs_dc):
    with pytest.raises(trading.InvalidQuantity):
        dividends.pay_dividends_for_terms(
            paper_ids_by_term={1: [1]}, per_share=-1, date=DAY, category=cs_dc
        )
