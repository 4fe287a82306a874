"""Limit orders on the curve: they fill only within their limits, promptly after the trade that
made them reachable, never after a cancel or expiry, and the books still prove out."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.utils import timezone

from market import curve, trading
from market.ledger import check_ledger
from market.models import Account, Notice, Order, Term, Trade
from market.orders import CrossesOwnOrder, OrderClosed, TooManyOrders, reachable_shares
from market.units import format_credits

pytestmark = pytest.mark.django_db(transaction=True)

CREDIT = 1_000_000


def key() -> str:
    return uuid.uuid4().hex


def buy(user, term, shares):
    return trading.buy(user=user, term=term, shares=shares, max_cost=None, key=key())


def sell(user, term, shares):
    return trading.sell(user=user, term=term, shares=shares, min_proceeds=None, key=key())


def order(user, term, side, shares, limit, **extra) -> Order:
    return trading.place_order(
        user=user, term=term, side=side, shares=shares, limit_price=limit, key=key(), **extra
    )


def set_cash(user, amount: int) -> None:
    account = Account.objects.get(user=user)
    trading.adjust_balance(account=account, amount=amount - trading.balance(user), reason="test")


def fresh(o: Order) -> Order:
    return Order.objects.get(pk=o.pk)


def fills_of(o: Order) -> list[Trade]:
    return [fill.trade for fill in o.fill_rows.select_related("trade").order_by("number")]


@pytest.fixture
def term(db) -> Term:
    # The first share costs 1 credit and each one out adds 0.01.
    return Term.objects.create(phrase="KV cache", p0=CREDIT, k=10_000)


def price(term: Term) -> int:
    term.refresh_from_db()
    return term.price


def test_an_order_within_reach_fills_at_once_up_to_its_limit_and_the_rest_waits(trader, term):
    # Shares 1..21 cost 1.00 … 1.20: a limit of 1.20 buys 21 of the 50.
    placed = order(trader, term, "buy", 50, 1_200_000)
    assert placed.state == "open"
    assert placed.filled == 21
    [fill] = fills_of(placed)
    assert fill.shares == 21 and fill.price_after == 1_210_000
    assert fill.amount == curve.cost(0, 21, p0=CREDIT, k=10_000)
    assert price(term) == 1_210_000  # the next share is past the limit
    assert check_ledger().ok


def test_a_waiting_buy_fills_right_after_another_trader_sells(trader, rival, term):
    buy(rival, term, 30)  # price 1.30
    waiting = order(trader, term, "buy", 10, 1_250_000)
    assert waiting.filled == 0
    sold = sell(rival, term, 10)  # price back to 1.20: shares at 1.20 … 1.25 are in reach
    assert sold.price_after == 1_200_000
    after = fresh(waiting)
    assert after.filled == 6  # shares 21..26 cost 1.20 … 1.25
    [fill] = fills_of(after)
    assert fill.account.user == trader
    # The fill's trade came right after the sell, and it records what triggered it.
    assert fill.term_version == sold.term_version + 1
    assert after.fill_rows.get().triggered_at == sold.created_at
    assert price(term) == 1_260_000
    assert check_ledger().ok


def test_a_fill_notice_names_the_price_and_the_fee_apart_and_what_still_waits(trader, rival, term):
    buy(rival, term, 30)  # price 1.30
    waiting = order(trader, term, "buy", 7, 1_250_000)
    sell(rival, term, 10)  # shares 21..26 at 1.20 … 1.25 come in reach: 6 of the 7
    after = fresh(waiting)
    [fill] = fills_of(after)
    # The price alone is what the limit bounds, so the reader sees it held; the fee is apart.
    assert Notice.objects.get(order=after).text.endswith(
        f"bought 6 shares for {format_credits(fill.amount)}, plus a fee of "
        f"{format_credits(fill.fee)}; 1 share still waits for the price."
    )
    assert fill.amount <= 6 * 1_250_000


def test_a_sell_order_never_receives_less_than_its_limit_for_any_share(trader, rival, term):
    buy(trader, term, 40)  # price 1.40; the 40th share cost 1.39
    waiting = order(trader, term, "sell", 40, 1_500_000)
    assert waiting.filled == 0
    buy(rival, term, 20)  # price 1.60: shares out 60; the 60th cost 1.59
    after = fresh(waiting)
    [fill] = fills_of(after)
    # Selling from 60 down: the last share sold must pay ≥ 1.50, i.e. share number 51 at 1.50.
    assert fill.shares == 10
    assert fill.price_after == 1_500_000  # the lowest share sold (number 51) paid 1.50
    assert after.filled == 10 and after.state == "open"
    assert check_ledger().ok


def test_fills_stay_within_limits_for_any_curve():
    # Every reachable count is the most shares with each single share inside the limit.
    for p0, k in [(1, 0), (5, 3), (1_000, 7), (CREDIT, 10_000)]:
        for supply in range(0, 40, 3):
            for limit in range(1, p0 + k * 45, max(1, (p0 + k * 45) // 37)):
                d = reachable_shares(
                    side="buy", remaining=10**6, limit=limit, supply=supply, p0=p0, k=k
                )
                if d:
                    assert p0 + k * (supply + d - 1) <= limit
                if d < 10**6:
                    assert p0 + k * (supply + d) > limit
                s = reachable_shares(
                    side="sell", remaining=10**6, limit=limit, supply=supply, p0=p0, k=k
                )
                assert s <= supply
                if s:
                    assert p0 + k * (supply - s) >= limit
                if s < supply:
                    assert p0 + k * (supply - s - 1) < limit


def test_limit_then_time_priority(trader, rival, reader, term):
    buy(reader, term, 50)  # price 1.50
    first = order(trader, term, "buy", 5, 1_300_000)
    better = order(rival, term, "buy", 5, 1_400_000)
    later_same = order(reader, term, "buy", 5, 1_300_000)
    sell(reader, term, 30)  # price 1.20: all three in reach
    fills = sorted(
        (fill.trade.term_version, o_name)
        for o_name, o in [("first", first), ("better", better), ("later", later_same)]
        for fill in fresh(o).fill_rows.select_related("trade")
    )
    assert [name for _, name in fills] == ["better", "first", "later"]
    assert check_ledger().ok


def test_an_unpayable_buy_fills_what_cash_pays_for_and_is_cancelled_with_the_reason(
    django_user_model, rival, term, settings
):
    poor = django_user_model.objects.create_user("poor")
    set_cash(poor, 3 * CREDIT)
    buy(rival, term, 50)  # price 1.50
    waiting = order(poor, term, "buy", 10, 1_100_000)
    sell(rival, term, 50)  # price 1.00: ten shares at ≤ 1.10 in reach, cash pays for two
    after = fresh(waiting)
    assert after.filled == 2
    assert after.state == "cancelled"
    assert after.reason.startswith("Not enough cash: the next share cost 1.03 credits")
    assert trading.balance(poor) >= 0
    notice = Notice.objects.filter(user=poor, order=after).latest("id")
    assert "bought 2 shares" in notice.text and "Not enough cash" in notice.text
    assert check_ledger().ok


def test_a_sell_order_whose_shares_were_sold_meanwhile_is_cancelled(trader, rival, term):
    buy(trader, term, 10)
    waiting = order(trader, term, "sell", 10, 1_300_000)
    sell(trader, term, 10)  # by hand: nothing left for the order
    buy(rival, term, 40)  # price 1.40: the order is in reach, but there is nothing to sell
    after = fresh(waiting)
    assert after.state == "cancelled" and after.filled == 0
    assert after.reason == "You no longer hold any shares of “KV cache” to sell."
    assert check_ledger().ok


def test_a_cancelled_order_never_fills(trader, rival, term):
    buy(rival, term, 30)
    waiting = order(trader, term, "buy", 10, 1_250_000)
    cancelled = trading.cancel_order(user=trader, order=waiting)
    assert cancelled.state == "cancelled" and cancelled.reason == "You cancelled it."
    sell(rival, term, 30)
    assert fresh(waiting).filled == 0 and not fills_of(waiting)
    with pytest.raises(OrderClosed, match="already cancelled"):
        trading.cancel_order(user=trader, order=waiting)


def test_an_expired_order_never_fills_and_its_owner_is_told(trader, rival, term):
    buy(rival, term, 30)
    waiting = order(
        trader, term, "buy", 10, 1_250_000, expires_at=timezone.now() + dt.timedelta(hours=1)
    )
    Order.objects.filter(pk=waiting.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))
    sell(rival, term, 30)
    after = fresh(waiting)
    assert after.state == "expired" and after.filled == 0
    assert Notice.objects.get(user=trader, order=after).text.endswith(
        "expired with no shares filled."
    )
    assert check_ledger().ok


def test_someone_elses_order_cannot_be_cancelled(trader, rival, term):
    buy(rival, term, 30)
    waiting = order(trader, term, "buy", 10, 1_250_000)
    with pytest.raises(trading.InvalidRequest, match="not one of your orders"):
        trading.cancel_order(user=rival, order=waiting)
    assert fresh(waiting).state == "open"


def test_a_repeated_order_key_places_one_order(trader, rival, term):
    buy(rival, term, 30)
    same = key()
    first = trading.place_order(
        user=trader, term=term, side="buy", shares=5, limit_price=1_000_000, key=same
    )
    again = trading.place_order(
        user=trader, term=term, side="buy", shares=5, limit_price=1_000_000, key=same
    )
    assert again.pk == first.pk and getattr(again, "repeated", False)
    assert Order.objects.filter(account__user=trader).count() == 1


def test_open_orders_are_bounded_per_trader(trader, rival, term, settings):
    settings.MARKET_MAX_OPEN_ORDERS = 3
    buy(rival, term, 30)
    for _ in range(3):
        order(trader, term, "buy", 1, 1_000_000)
    with pytest.raises(TooManyOrders, match="3 orders waiting"):
        order(trader, term, "buy", 1, 1_000_000)


def test_a_trader_cannot_leave_orders_that_would_trade_against_each_other(trader, term):
    buy(trader, term, 20)  # price 1.20
    order(trader, term, "sell", 5, 1_500_000)
    with pytest.raises(CrossesOwnOrder):
        order(trader, term, "buy", 5, 1_500_000)
    order(trader, term, "buy", 5, 1_100_000)  # below their own sell: fine


def test_a_buy_order_the_trader_cannot_pay_one_share_of_is_refused(django_user_model, term):
    broke = django_user_model.objects.create_user("broke")
    set_cash(broke, 500_000)
    with pytest.raises(trading.InsufficientCash, match="one share at your limit"):
        order(broke, term, "buy", 1, 1_000_000)


def test_halting_a_term_with_update_cancels_its_orders_with_a_notice(trader, rival, term):
    buy(rival, term, 30)
    waiting = order(trader, term, "buy", 10, 1_250_000)
    Term.objects.filter(pk=term.pk).update(status="halted", status_reason="Checking a feed.")
    after = fresh(waiting)
    assert after.state == "cancelled"
    assert after.reason == "Trading in “KV cache” was halted (Checking a feed)."
    notice = Notice.objects.get(user=trader, order=after)
    assert notice.text == (
        "Your order to buy 10 shares of “KV cache” was cancelled, none filled: trading in "
        "“KV cache” was halted (Checking a feed)."
    )
    Term.objects.filter(pk=term.pk).update(status="listed", status_reason="")
    sell(rival, term, 30)
    assert fresh(waiting).filled == 0
    assert check_ledger().ok


def test_delisting_through_the_model_cancels_too(trader, rival, term):
    buy(rival, term, 30)
    waiting = order(trader, term, "buy", 10, 1_250_000)
    term.refresh_from_db()
    term.status = "delisted"
    term.save()
    assert fresh(waiting).reason == "“KV cache” was delisted."


def test_crossing_orders_of_two_traders_settle_through_the_curve_and_end(
    trader, rival, reader, term
):
    buy(rival, term, 60)  # price 1.60
    buy(reader, term, 20)  # price 1.80
    seller = order(rival, term, "sell", 60, 1_000_000)  # sells down to 1.00 right away
    assert fresh(seller).filled == 60
    buyer = order(trader, term, "buy", 200, 1_500_000)
    # The buy climbs to its limit; the reader's trade at the top then lets it climb no more.
    assert fresh(buyer).filled == price(term) // 10_000 - 100 - 20
    assert check_ledger().ok


def test_a_chain_of_fills_ends_and_each_order_is_filled_once_per_share(trader, rival, reader, term):
    # A buy and a sell of two traders that both reach: they trade through the curve, one after
    # the other, until one is done; never more shares than either ordered.
    buy(rival, term, 100)  # price 2.00
    seller = order(rival, term, "sell", 100, 1_100_000)  # fills at once down to 1.10
    assert fresh(seller).filled == 90
    buyer = order(trader, term, "buy", 300, 1_900_000)
    s, b = fresh(seller), fresh(buyer)
    assert s.filled <= s.shares and b.filled <= b.shares
    assert s.state == "filled" or b.state == "filled" or price(term) > 1_900_000
    assert check_ledger().ok


def test_check_ledger_catches_an_order_filled_past_its_shares_or_its_limit(trader, rival, term):
    from django.db import connection

    buy(rival, term, 30)
    waiting = order(trader, term, "buy", 10, 1_250_000)
    sell(rival, term, 10)
    assert check_ledger().ok
    with connection.cursor() as cursor:
        # The books as a buggy fill would leave them: a limit below what the fill paid.
        cursor.execute("UPDATE market_order SET limit_price = 1240000 WHERE id = %s", [waiting.pk])
    report = check_ledger()
    assert not report.ok
    assert any("went past the limit of 1,240,000 µ¢ a share" in v for v in report.violations)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE market_order SET limit_price = 1250000, filled = 5 WHERE id = %s", [waiting.pk]
        )
    report = check_ledger()
    assert any(
        "shows 5 filled in 1 fill(s), but its fills' trades hold 6" in v for v in report.violations
    )
