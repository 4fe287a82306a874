"""Postgres connection lost during a trade: the trade happened exactly once or not at all, and
the books still balance. Real Postgres backends are terminated with pg_terminate_backend."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import OperationalError, connection

from market import trading
from market.ledger import check_ledger
from market.models import Term, Trade

pytestmark = pytest.mark.django_db(transaction=True)


def dsn() -> str:
    db = connection.settings_dict
    return f"host={db['HOST']} port={db['PORT']} user={db['USER']} dbname={db['NAME']}"


def wait_for_backend_waiting_on_a_lock(admin: psycopg.Connection, *, exclude: int) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        row = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> %s",
            [exclude],
        ).fetchone()
        if row:
            return row[0]
        time.sleep(0.05)
    raise AssertionError("the trade never reached the term lock")


def test_connection_killed_while_the_trade_waits_for_its_lock(trader):
    term = Term.objects.create(phrase="KV cache")
    cash_before = trading.balance(trader)

    # Another session holds the term's row lock, so the trade stops inside its transaction.
    blocker = psycopg.connect(dsn())
    blocker.execute("SELECT id FROM market_term WHERE id = %s FOR UPDATE", [term.pk])
    admin = psycopg.connect(dsn(), autocommit=True)
    outcome: dict[str, object] = {}

    def trade() -> None:
        try:
            outcome["trade"] = trading.buy(
                user=trader, term=term, shares=5, max_cost=None, key="order-1"
            )
        except Exception as error:  # the lost connection, whatever shape it takes
            outcome["error"] = error
        finally:
            connection.close()

    thread = threading.Thread(target=trade)
    thread.start()
    try:
        victim = wait_for_backend_waiting_on_a_lock(admin, exclude=blocker.info.backend_pid)
        admin.execute("SELECT pg_terminate_backend(%s)", [victim])
        thread.join(timeout=10)
    finally:
        blocker.rollback()
        blocker.close()
        admin.close()

    assert isinstance(outcome.get("error"), OperationalError | psycopg.OperationalError)
    assert Trade.objects.count() == 0
    assert trading.balance(trader) == cash_before
    assert trading.holding(trader, term) == 0
    assert check_ledger().ok

    # The client tries again with the same key: one trade, and a repeat returns it.
    first = trading.buy(user=trader, term=term, shares=5, max_cost=None, key="order-1")
    again = trading.buy(user=trader, term=term, shares=5, max_cost=None, key="order-1")
    assert first.pk == again.pk
    assert trading.holding(trader, term) == 5
    assert check_ledger().ok


def test_connection_lost_after_commit_is_retried_without_trading_twice(trader):
    term = Term.objects.create(phrase="Raft")
    trade = trading.buy(user=trader, term=term, shares=3, max_cost=None, key="order-2")
    # The server went away before the client read its answer: the next call must reconnect.
    with psycopg.connect(dsn(), autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [connection.connection.info.backend_pid])
    with pytest.raises(OperationalError):
        trading.buy(user=trader, term=term, shares=3, max_cost=None, key="order-2")
    connection.close()

    retried = trading.buy(user=trader, term=term, shares=3, max_cost=None, key="order-2")
    assert retried.pk == trade.pk
    assert Trade.objects.count() == 1
    assert trading.holding(trader, term) == 3
    assert check_ledger().ok
