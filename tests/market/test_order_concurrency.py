"""Limit orders under real concurrency: many traders on real Postgres connections at once."""

from __future__ import annotations

import contextlib
import random
import threading
import time
import uuid

import pytest

from market import trading
from market.ledger import check_ledger
from market.models import Order, Term
from market.orders import OrderClosed
from tests.threads import run_threads

pytestmark = pytest.mark.django_db(transaction=True)

CREDIT = 1_000_000
THREADS = 8


def key() -> str:
    return uuid.uuid4().hex


def test_eight_threads_trading_across_terms_with_200_resting_orders_keep_every_invariant(
    django_user_model, settings
):
    settings.MARKET_MAX_OPEN_ORDERS = 50
    terms = [Term.objects.create(phrase=f"term {i}", p0=100_000, k=1_000) for i in range(4)]
    makers = [django_user_model.objects.create_user(f"maker{i}") for i in range(5)]
    traders = [django_user_model.objects.create_user(f"trader{i}") for i in range(THREADS)]
    rng = random.Random(7)
    for maker in makers:  # shares to sell, then orders around the price on both sides
        for term in terms:
            trading.buy(user=maker, term=term, shares=40, max_cost=None, key=key())
    placed = 0
    for maker in makers:
        for term in terms:
            term.refresh_from_db()
            for _ in range(5):
                buy_limit = term.price - rng.randint(1, 60) * 1_000
                trading.place_order(
                    user=maker,
                    term=term,
                    side="buy",
                    shares=rng.randint(1, 15),
                    limit_price=buy_limit,
                    key=key(),
                )
                trading.place_order(
                    user=maker,
                    term=term,
                    side="sell",
                    shares=rng.randint(1, 15),
                    limit_price=term.price + rng.randint(1, 60) * 1_000,
                    key=key(),
                )
                placed += 2
    assert placed == 200
    assert Order.objects.filter(state="open").count() == 200

    def trade(thread: int) -> int:
        mine = random.Random(thread)
        user = traders[thread]
        for _ in range(120):
            term = mine.choice(terms)
            try:
                if mine.random() < 0.5:
                    trading.buy(
                        user=user, term=term, shares=mine.randint(1, 12), max_cost=None, key=key()
                    )
                else:
                    held = trading.holding(user, term)
                    if held:
                        trading.sell(
                            user=user,
                            term=term,
                            shares=mine.randint(1, held),
                            min_proceeds=None,
                            key=key(),
                        )
            except trading.TradeError:
                pass
        return 0

    run_threads(THREADS, trade)
    orders = list(Order.objects.all())
    assert sum(o.fills for o in orders) > 0, "the trades should have reached some orders"
    for o in orders:
        assert 0 <= o.filled <= o.shares
    report = check_ledger()
    assert report.ok, report.text()
    # And nothing reachable is left waiting: every pass ran to its end.
    from market.orders import reachable_terms

    assert reachable_terms() == []


def test_a_cancel_racing_a_fill_either_wins_or_comes_after_it_never_both(django_user_model):
    term = Term.objects.create(phrase="race", p0=CREDIT, k=10_000)
    seller = django_user_model.objects.create_user("seller")
    makers = [django_user_model.objects.create_user(f"m{i}") for i in range(20)]
    jitter = random.Random(3)
    seen: set[int] = set()
    for round_ in range(20):
        maker = makers[round_]
        trading.buy(user=seller, term=term, shares=30, max_cost=None, key=key())
        term.refresh_from_db()
        waiting = trading.place_order(
            user=maker,
            term=term,
            side="buy",
            shares=50,
            limit_price=term.price - 50_000,
            key=key(),
        )
        assert waiting.filled == 0
        delay = jitter.uniform(0, 0.15)

        def race(i: int, maker=maker, waiting=waiting, delay=delay) -> None:
            if i == 0:
                # Spread the cancel over the sell's time, so that both orders happen.
                time.sleep(delay)
                # OrderClosed: the fill won and finished the order, which is fine too.
                with contextlib.suppress(OrderClosed):
                    trading.cancel_order(user=maker, order=waiting)
            else:
                trading.sell(user=seller, term=term, shares=30, min_proceeds=None, key=key())

        run_threads(2, race)
        after = Order.objects.get(pk=waiting.pk)
        assert after.state == "cancelled"  # the cancel cannot lose: the order had 50 to go
        filled_then = after.filled
        seen.add(filled_then)
        # Either the cancel came first (nothing filled) or the fill did (26 shares: from the
        # supply the sell left up to the limit), then the cancel.
        assert filled_then in (0, 26)
        trading.buy(user=seller, term=term, shares=5, max_cost=None, key=key())
        trading.sell(user=seller, term=term, shares=5, min_proceeds=None, key=key())
        assert Order.objects.get(pk=waiting.pk).filled == filled_then  # never again
    report = check_ledger()
    assert report.ok, report.text()


def _waiting_on_a_lock(statement_start: str) -> bool:
    from django.db import connection

    with connection.cursor() as cursor:
        # Inside a transaction the activity view is read once and kept, unless cleared.
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
            "AND query LIKE %s",
            [statement_start + "%"],
        )
        return bool(cursor.fetchone()[0])


def _until(condition, seconds: float = 30) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_a_cancel_that_arrives_during_a_fill_waits_for_it_and_then_closes_the_rest(trader, rival):
    """The cancel blocks on the order row's lock while the fill holds it, then cancels what is
    left; the fill's trade stands and is before the close (check_ledger proves it).

    The fill is held in the middle by another transaction holding the owner's account row: the
    fill procedure has by then locked the term and the order (its lock order: term, order,
    account), so the cancel, which takes the order row, must wait for the whole fill."""
    from django.db import connection, transaction

    from market.models import Account

    term = Term.objects.create(phrase="held", p0=CREDIT, k=10_000)
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    waiting = trading.place_order(
        user=trader, term=term, side="buy", shares=50, limit_price=1_250_000, key=key()
    )
    holding, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}
    cancelled: dict[str, object] = {}

    def run(i: int) -> None:
        if i == 0:  # holds the owner's account row until the cancel is seen waiting
            with transaction.atomic():
                Account.objects.select_for_update().get(user=trader)
                holding.set()
                assert release.wait(30)
        elif i == 1:  # the sale that brings the order within reach, and its fill pass
            assert holding.wait(30)
            trading.sell(user=rival, term=term, shares=30, min_proceeds=None, key=key())
        else:  # the cancel, once the fill is under way and stuck on the account
            try:
                seen["fill"] = _until(lambda: _waiting_on_a_lock("CALL market_fill_orders"))
                cancelling = threading.Thread(target=cancel)
                cancelling.start()
                seen["cancel"] = _until(
                    lambda: _waiting_on_a_lock("UPDATE market_order o SET state")
                )
            finally:
                release.set()
            cancelling.join()

    def cancel() -> None:
        try:
            cancelled["order"] = trading.cancel_order(user=trader, order=waiting)
        finally:
            connection.close()

    run_threads(3, run)
    assert seen == {"fill": True, "cancel": True}, "the cancel should have waited for the fill"
    after = Order.objects.get(pk=waiting.pk)
    assert after.state == "cancelled" and after.reason == "You cancelled it."
    assert after.filled == 26  # shares 1..26 at 1.00 … 1.25, traded before the cancel
    report = check_ledger()
    assert report.ok, report.text()


def test_the_same_order_key_sent_from_eight_threads_places_one_order(trader, rival):
    term = Term.objects.create(phrase="repeat", p0=CREDIT, k=10_000)
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    same = key()

    def place(i: int) -> int:
        return trading.place_order(
            user=trader, term=term, side="buy", shares=5, limit_price=1_000_000, key=same
        ).pk

    assert len(set(run_threads(THREADS, place))) == 1
    assert Order.objects.filter(account__user=trader).count() == 1


def test_placing_an_order_while_a_fill_holds_the_term_takes_the_term_before_the_account(
    trader, rival
):
    """A fill holds the term and then wants the order owner's account; the same owner placing
    an order on that term must not hold their account while waiting for the term (the order's
    foreign key takes the term's KEY SHARE lock), or the two wait on each other until the
    deadlock detector kills one."""
    from django.db import connection, transaction

    from market.models import Account

    term = Term.objects.create(phrase="placing", p0=CREDIT, k=10_000)
    trading.buy(user=rival, term=term, shares=30, max_cost=None, key=key())
    trading.balance(trader)  # opens the account
    retries = trading.retry_count()
    errors: list[BaseException] = []
    # The placement starts once the "fill" holds the term: started first, it could be done
    # before the term is taken and never wait, which is not the case under test.
    term_held = threading.Event()

    def run(i: int) -> None:
        if i == 0:  # as a fill does: the term, then (once the placement waits) the account
            try:
                with transaction.atomic():
                    with connection.cursor() as cursor:
                        cursor.execute("SET LOCAL lock_timeout = '5s'")
                        cursor.execute(
                            "SELECT 1 FROM market_term WHERE id = %s FOR UPDATE", [term.pk]
                        )
                    term_held.set()
                    assert _until(
                        lambda: (
                            _waiting_on_a_lock("SELECT 1 FROM market_term")
                            or _waiting_on_a_lock("COMMIT")
                        )
                    )
                    Account.objects.select_for_update().get(user=trader)
            except BaseException as exc:  # a deadlock or a lock timeout: the test's failure
                errors.append(exc)
        else:
            assert term_held.wait(30)
            trading.place_order(
                user=trader, term=term, side="buy", shares=5, limit_price=1_000_000, key=key()
            )

    run_threads(2, run)
    assert errors == []
    assert trading.retry_count() == retries
    assert Order.objects.filter(account__user=trader, state="open").count() == 1
