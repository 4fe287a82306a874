"""Many traders at once, on real Postgres connections: the books must still balance exactly."""

from __future__ import annotations

import random
from collections import defaultdict

import psycopg.errors
import pytest
from django.db import OperationalError

from market import trading
from market.ledger import check_ledger
from market.models import Term, Trade
from peerrevenue import db
from tests.threads import run_threads

THREADS = 8
TRADES_PER_THREAD = 300
USERS = 4
GRANT = 1_000_000_000

pytestmark = pytest.mark.django_db(transaction=True)


def test_random_concurrent_trading_keeps_the_books_exact(django_user_model):
    users = [django_user_model.objects.create_user(f"t{i}") for i in range(USERS)]
    terms = [
        Term.objects.create(phrase=phrase, p0=100_000, k=1_000)
        for phrase in ("consensus", "Raft", "KV cache")
    ]

    def trade_randomly(thread: int) -> list[tuple[int, str, Trade]]:
        rng = random.Random(thread)
        user = users[thread % USERS]  # two threads share each account
        done: list[tuple[int, str, Trade]] = []
        my_keys: list[str] = []
        for i in range(TRADES_PER_THREAD):
            term = rng.choice(terms)
            roll = rng.random()
            key = f"{thread}-{i}"
            try:
                if roll < 0.12 and my_keys:  # a repeated submission
                    key = rng.choice(my_keys)
                    trade = trading.buy(user=user, term=term, shares=1, max_cost=None, key=key)
                elif roll < 0.22:  # a bad quantity
                    bad = rng.choice([0, -3, 10_001, 2.5])
                    # Not always an int, on purpose: the refusal of any bad value is under test.
                    trading.sell(user=user, term=term, shares=bad, min_proceeds=None, key=key)  # type: ignore[arg-type]
                    raise AssertionError("a bad quantity was accepted")
                elif roll < 0.35:  # a buy limited to its quote: slips if the price moves
                    shares = rng.randint(1, 30)
                    limit = trading.quote(term=term, side="buy", shares=shares).total
                    trade = trading.buy(
                        user=user, term=term, shares=shares, max_cost=limit, key=key
                    )
                elif roll < 0.60:
                    trade = trading.buy(
                        user=user, term=term, shares=rng.randint(1, 30), max_cost=None, key=key
                    )
                else:  # sells, many of them more than the account holds
                    trade = trading.sell(
                        user=user, term=term, shares=rng.randint(1, 40), min_proceeds=None, key=key
                    )
            except trading.TradeError:
                continue
            my_keys.append(key)
            done.append((user.pk, key, trade))
        return done

    results = run_threads(THREADS, trade_randomly)

    report = check_ledger()
    assert report.ok, report.text()
    returned: dict[int, dict[int, Trade]] = defaultdict(dict)
    key_to_trade: dict[tuple[int, str], int] = {}
    for user_id, key, trade in (item for thread in results for item in thread):
        returned[user_id][trade.pk] = trade
        assert key_to_trade.setdefault((user_id, key), trade.pk) == trade.pk
    assert sum(len(trades) for trades in returned.values()) == Trade.objects.count() > 500
    for user in users:
        trades = returned[user.pk].values()
        assert trading.balance(user) == GRANT + sum(t.cash_change for t in trades)
        for term in terms:
            assert trading.holding(user, term) == sum(
                t.shares_change for t in trades if t.term_id == term.pk
            )


def test_deadlocks_and_serialization_failures_are_retried_then_given_up(monkeypatch):
    monkeypatch.setattr(db, "BACKOFF_BASE_SECONDS", 0.0001)
    failures = [psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure]
    calls = []

    def flaky() -> str:
        calls.append(1)
        if failures:
            try:
                raise failures.pop()("simulated")
            except psycopg.Error as exc:
                raise OperationalError(str(exc)) from exc
        return "done"

    before = trading.retry_count()
    assert db.atomic_with_retries(flaky) == "done"
    assert len(calls) == 3 and trading.retry_count() == before + 2

    def always_deadlocks():
        try:
            raise psycopg.errors.DeadlockDetected("simulated")
        except psycopg.Error as exc:
            raise OperationalError(str(exc)) from exc

    with pytest.raises(OperationalError):
        db.atomic_with_retries(always_deadlocks)

    def other_error():
        calls.append(1)
        raise OperationalError("connection lost")

    calls.clear()
    with pytest.raises(OperationalError, match="connection lost"):
        db.atomic_with_retries(other_error)
    assert len(calls) == 1  # only serialization failures and deadlocks are retried


def test_ten_concurrent_submissions_of_one_key_make_one_trade(django_user_model):
    trader = django_user_model.objects.create_user("tobias")
    kv_cache = Term.objects.create(phrase="KV cache")
    raft = Term.objects.create(phrase="Raft")

    trades = run_threads(
        10,
        lambda i: trading.buy(user=trader, term=kv_cache, shares=3, max_cost=None, key="once"),
    )
    assert len({trade.pk for trade in trades}) == 1
    assert Trade.objects.count() == 1 and trading.holding(trader, kv_cache) == 3

    # The same key racing through two different terms' locks still trades only once.
    trades = run_threads(
        10,
        lambda i: trading.buy(
            user=trader, term=(kv_cache, raft)[i % 2], shares=2, max_cost=None, key="twice"
        ),
    )
    assert len({trade.pk for trade in trades}) == 1
    assert Trade.objects.count() == 2
    assert trading.holding(trader, kv_cache) + trading.holding(trader, raft) == 5
    assert check_ledger().ok
