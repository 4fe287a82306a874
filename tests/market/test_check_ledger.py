"""manage.py check_ledger: silent success on clean books, a readable line per corruption."""

from __future__ import annotations

import io
import time

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.db.models import F

from market import ledger, tasks, trading
from market.ledger import check_ledger
from market.models import Account, Entry, Holding, Term, Trade


@pytest.fixture
def books(trader, rival, kv_cache, raft, curator):
    trading.buy(user=trader, term=kv_cache, shares=10, max_cost=None, key="1")
    trading.buy(user=rival, term=kv_cache, shares=4, max_cost=None, key="2")
    trading.sell(user=trader, term=kv_cache, shares=3, min_proceeds=None, key="3")
    trading.buy(user=rival, term=raft, shares=6, max_cost=None, key="4")
    trading.adjust_balance(
        account=Account.objects.get(user=trader), amount=1_000, reason="test", by=curator
    )


def run_check() -> str:
    out = io.StringIO()
    call_command("check_ledger", stdout=out, stderr=out)
    return out.getvalue()


def failing_check() -> str:
    out = io.StringIO()
    with pytest.raises(CommandError, match="ledger invariant violation"):
        call_command("check_ledger", stdout=out, stderr=out)
    return out.getvalue()


def test_clean_books_pass(books):
    assert run_check().startswith("Ledger OK: ")
    assert tasks.check_ledger() is True


def test_empty_books_pass(db):
    assert "Ledger OK" in run_check()


def test_a_tampered_cash_balance_is_reported(books, trader, caplog):
    Account.objects.filter(user=trader).update(cash=F("cash") + 7)
    report = failing_check()
    assert "(tobias) shows cash" in report and "(off by +7 µ¢)" in report
    assert "Money does not add up" in report
    assert tasks.check_ledger() is False
    assert "Ledger check FAILED" in caplog.text


def test_a_tampered_holding_is_reported(books, trader, kv_cache):
    Holding.objects.filter(account__user=trader, term=kv_cache).update(shares=F("shares") + 1)
    report = failing_check()
    assert "shows 8 shares of term" in report and "(off by +1)" in report
    assert "shows a supply of 11 but holders hold 12" in report


def test_an_unbalanced_transaction_is_reported(books):
    entry = Entry.objects.filter(asset="cash", account__kind="fees").first()
    assert entry is not None
    Entry.objects.filter(pk=entry.pk).update(amount=F("amount") + 5)
    report = failing_check()
    assert f"Ledger transaction {entry.transaction_id} does not balance" in report
    assert "sum to +5, not 0" in report


def test_a_reserve_off_the_curve_is_reported(books, kv_cache):
    Term.objects.filter(pk=kv_cache.pk).update(reserve=F("reserve") - 1)
    report = failing_check()
    assert "(“KV cache”) holds a reserve of" in report and "its curve needs cost(0, 11)" in report


def test_a_supply_without_shares_is_reported(books, raft):
    Term.objects.filter(pk=raft.pk).update(supply=F("supply") + 1)
    report = failing_check()
    assert "(“Raft”) shows a supply of 7 shares but the ledger issued 6" in report


def test_a_gap_in_trade_versions_is_reported(books, kv_cache):
    Trade.objects.filter(term=kv_cache, term_version=3).update(term_version=4)
    report = failing_check()
    assert "has version 4 where 3 was expected" in report


# Each invariant on its own: a tampering that breaks it is what its check reports. (Dividends
# and orders, 11 and 12, are tampered with in test_integrity.py and test_orders.py.)


def _tamper_fee_entry(trader, kv_cache, raft):
    entry = Entry.objects.filter(asset="cash", account__kind="fees").first()
    assert entry is not None
    Entry.objects.filter(pk=entry.pk).update(amount=F("amount") + 5)


def _tamper_cash(trader, kv_cache, raft):
    Account.objects.filter(user=trader).update(cash=F("cash") + 7)


def _tamper_holding(trader, kv_cache, raft):
    Holding.objects.filter(account__user=trader, term=kv_cache).update(shares=F("shares") + 1)


def _tamper_supply(trader, kv_cache, raft):
    Term.objects.filter(pk=raft.pk).update(supply=F("supply") + 1)


def _tamper_negative_holding(trader, kv_cache, raft):
    # The database refuses a negative holding; the check is for books that got past it (a
    # restore without the constraints, a migration that dropped one). The test's transaction
    # rolls the DROP back.
    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the deferred checks, before the DDL
        cursor.execute("ALTER TABLE market_holding DROP CONSTRAINT holding_non_negative")
    Holding.objects.filter(account__user=trader, term=kv_cache).update(shares=-2)


def _tamper_reserve(trader, kv_cache, raft):
    Term.objects.filter(pk=kv_cache.pk).update(reserve=F("reserve") - 1)


def _tamper_version(trader, kv_cache, raft):
    Trade.objects.filter(term=kv_cache, term_version=3).update(term_version=4)


def _tamper_fee(trader, kv_cache, raft):
    Trade.objects.filter(term=raft).update(fee=F("fee") + 1)


TAMPERED = {
    "transactions_balance": (_tamper_fee_entry, "sum to +5, not 0."),
    "cash_matches_entries": (_tamper_cash, "(tobias) shows cash"),
    "holdings_match_entries": (_tamper_holding, "shows 8 shares of term"),
    "pools_match_entries": (_tamper_supply, "shows a supply of 7 shares but the ledger issued 6"),
    "nothing_negative": (_tamper_negative_holding, "holds a negative -2 shares of term"),
    "reserves_on_the_curve": (_tamper_reserve, "its curve needs cost(0, 11)"),
    "supply_is_held": (_tamper_holding, "shows a supply of 11 but holders hold 12"),
    "money_adds_up": (_tamper_cash, "Money does not add up"),
    "trades_in_sequence": (_tamper_version, "has version 4 where 3 was expected"),
    "trades_match_entries": (_tamper_fee, "does not match its ledger transaction"),
}


@pytest.mark.parametrize("name", TAMPERED)
def test_each_invariant_reports_the_tampering_that_breaks_it(name, books, trader, kv_cache, raft):
    invariant = getattr(ledger, name)
    tamper, said = TAMPERED[name]
    assert check_ledger(invariants=[invariant]).ok
    tamper(trader, kv_cache, raft)
    alone = check_ledger(invariants=[invariant])
    assert any(said in violation for violation in alone.violations), alone.violations
    assert any(said in violation for violation in check_ledger().violations)


def test_every_invariant_is_run_and_says_what_it_holds():
    numbers = [(invariant.__doc__ or "").split(".")[0] for invariant in ledger.INVARIANTS]
    assert numbers == [str(number) for number in range(1, len(ledger.INVARIANTS) + 1)]
    # The dividends' and the orders' invariants are tampered with in test_dividend_books.py,
    # test_integrity.py and test_orders.py.
    elsewhere = {
        "dividends_follow_the_rule",
        "orders_match_fills",
        "authors_not_paid_for_their_own_words",
        "windows_are_the_papers",
    }
    assert set(TAMPERED) | elsewhere == {invariant.__name__ for invariant in ledger.INVARIANTS}


def test_the_check_stays_fast_with_a_hundred_thousand_entries(books, trader):
    """Aggregates, not a row-by-row walk: 100k entries take well under a few seconds."""
    user = Account.objects.get(user=trader)
    issuance = Account.objects.get(kind="issuance")
    with connection.cursor() as cursor:
        # A test-only shortcut: 50,000 balanced one-µ¢ adjustments written straight in SQL.
        cursor.execute(
            """WITH txns AS (
                INSERT INTO market_ledgertransaction (kind, memo, created_at)
                SELECT 'adjustment', 'bulk', now() FROM generate_series(1, 50000) RETURNING id
            )
            INSERT INTO market_entry (transaction_id, account_id, asset, amount)
            SELECT txns.id, leg.account_id, 'cash', leg.amount
            FROM txns, (VALUES (%s, 1), (%s, -1)) AS leg (account_id, amount)""",
            [user.pk, issuance.pk],
        )
    Account.objects.filter(pk=user.pk).update(cash=F("cash") + 50_000)
    Account.objects.filter(pk=issuance.pk).update(cash=F("cash") - 50_000)
    assert Entry.objects.count() > 100_000

    started = time.perf_counter()
    report = check_ledger()
    elapsed = time.perf_counter() - started

    assert report.ok, report.text()
    assert elapsed < 5, f"check_ledger took {elapsed:.1f} s on 100k entries"
