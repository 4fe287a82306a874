"""Limit orders on the curve: placing, cancelling, expiring, and filling them.

``place_order`` leaves an order; one whose limit is already reachable fills at once as far as
its limit allows, and the rest waits. A waiting order fills when a trade moves the price within
its reach: the trade function says so (``orders_reachable``, migration 0010) and
``market.trading`` calls ``fill_pass`` right after that trade commits, in the same request.
The worker sweeps every minute for what a request could not finish (``sweep``).

Each fill is an ordinary trade through ``market.trading``'s one trade path (``_place``), under
the same locks, in one transaction with the order's own update:

    term row (FOR UPDATE) → the order row (FOR UPDATE) → the owner's account row (FOR UPDATE,
    as the trade function takes it) → the trade function (term and account again: held) →
    the order's filled count and a fill row → COMMIT

the order every market write uses (term, then account), with the order row between them. A
cancel or an expiry takes only the order row's lock, so it waits for a fill in progress, and a
fill after it finds the order closed: a cancelled or expired order never fills. The fill's
trade key is derived from the order and the fill's number (``order_book.fill_key``), so a
retried fill trades once.

Priority: within a side, limit then time (the highest buy limit, the lowest sell limit, then
the oldest); between a reachable buy and a reachable sell, the older order first. Each fill
trades as many shares as the order's limit allows (the last share bought costs at most the
limit; the last share sold pays at least it), capped by what is left of the order, by
``MARKET_MAX_SHARES_PER_TRADE``, and by the owner's cash (buy) or shares (sell) at that
moment. An order that cash or shares stop short of its reachable part fills what they pay for
and is cancelled with the reason.

Why a pass ends: every fill trades at least one share of a waiting order, no order joins the
pass while it runs, and a fill moves the price against its own side (a buy up, a sell down), so
an order is filled until its limit stops it or its shares run out. The pass therefore ends after
at most as many fills as the waiting shares; it also stops after
``MARKET_ORDER_FILLS_PER_PASS`` fills and leaves the rest to the worker, so no request runs long.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, connection
from django.db.models.functions import Now
from django.utils import timezone

from peerrevenue.db import atomic_with_retries, violates
from peerrevenue.queueing import send_from_request

from . import curve, notices, trading
from .cash import balance, holding
from .models import Account, Term, Trade
from .notice_models import Notice
from .order_book import Order, OrderFill, describe, fill_key
from .refusals import (
    InsufficientCash,
    InsufficientShares,
    InvalidQuantity,
    InvalidRequest,
    TermNotTradable,
    TradeError,
    untradable,
)
from .units import format_credits, format_shares

logger = logging.getLogger(__name__)


class TooManyOrders(TradeError):
    pass


class CrossesOwnOrder(TradeError):
    pass


class OrderClosed(TradeError):
    """The order is no longer waiting (filled, cancelled or expired): nothing to cancel."""


# Placing and cancelling -------------------------------------------------------------------


def _check_order(*, side: object, shares: object, limit_price: object, expires_at: object) -> None:
    if side not in Trade.Side.values:
        raise InvalidRequest(f"Choose buy or sell (got {side!r}).")
    limit = settings.MARKET_MAX_SHARES_PER_TRADE
    if type(shares) is not int or not 1 <= shares <= limit:
        raise InvalidQuantity(
            f"Enter a whole number of shares from 1 to {limit:,} (got {shares!r})."
        )
    if type(limit_price) is not int or not 1 <= limit_price <= curve.BIGINT_MAX:
        raise InvalidRequest(
            f"The limit is a price a share above zero, in µ¢ (got {limit_price!r})."
        )
    if expires_at is not None:
        if not isinstance(expires_at, dt.datetime) or timezone.is_naive(expires_at):
            raise InvalidRequest("The expiry must be a date and time with its time zone.")
        if expires_at <= timezone.now():
            raise InvalidRequest("That expiry is already past; choose a later one, or none.")


def place_order(
    *,
    user,
    term: Term,
    side: str,
    shares: int,
    limit_price: int,
    expires_at: dt.datetime | None = None,
    key: str,
) -> Order:
    """Leave an order to buy up to ``shares`` shares of ``term`` paying at most
    ``limit_price`` µ¢ for any single share (sell: receiving at least that), until
    ``expires_at`` (None: until filled or cancelled). Fills at once as far as the limit allows.

    A repeated ``key`` returns the order it placed first (``repeated`` set), placing nothing.
    Raises a ``TradeError`` saying why an order cannot be placed.
    """
    if user is None or not getattr(user, "pk", None):
        raise InvalidRequest("Sign in to leave an order.")
    _check_order(side=side, shares=shares, limit_price=limit_price, expires_at=expires_at)
    key = trading._check_key(key)
    current = Term.objects.filter(pk=term.pk).first()
    if current is None:
        raise TermNotTradable("That term does not exist (any more); pick one from the market.")
    refusal = untradable(current)
    if refusal is not None:
        raise refusal
    cash = balance(user)  # opens the account of a user from before the market existed
    try:
        order = atomic_with_retries(
            lambda: _insert_order(
                user=user,
                term=current,
                side=side,
                shares=shares,
                limit_price=limit_price,
                expires_at=expires_at,
                key=key,
                cash=cash,
            )
        )
    except IntegrityError as exc:
        if not violates(exc, "unique_order_key_per_account"):
            raise
        order = Order.objects.get(account__user=user, key=key)
        order.repeated = True  # type: ignore[attr-defined]
        return order
    if getattr(order, "repeated", False):
        return order
    # The order is placed (committed): a failure to fill it now is the worker's to retry.
    after_trade(current.pk, order.created_at)
    order.refresh_from_db()
    return order


def _insert_order(
    *, user, term: Term, side: str, shares: int, limit_price: int, expires_at, key: str, cash: int
) -> Order:
    # The account row's lock (and nothing else in this transaction, so no lock order to keep)
    # serialises one trader's placements: the open-order count and the crossing check hold.
    account_id = Account.objects.select_for_update().values_list("pk", flat=True).get(user=user)
    existing = Order.objects.filter(account_id=account_id, key=key).first()
    if existing is not None:
        existing.repeated = True  # type: ignore[attr-defined]
        return existing
    waiting = Order.objects.filter(account_id=account_id, state=Order.State.OPEN).exclude(
        expires_at__lte=timezone.now()
    )
    most = settings.MARKET_MAX_OPEN_ORDERS
    if waiting.count() >= most:
        raise TooManyOrders(
            f"You have {most:,} orders waiting, the most a trader may have; cancel one first."
        )
    opposite = Trade.Side.SELL if side == Trade.Side.BUY else Trade.Side.BUY
    for other in waiting.filter(term=term, side=opposite):
        crosses = (
            limit_price >= other.limit_price
            if side == Trade.Side.BUY
            else limit_price <= other.limit_price
        )
        if crosses:
            raise CrossesOwnOrder(
                f"Your own order to {other.side} at {format_credits(other.limit_price)} a share "
                f"would trade against this one; cancel it first, or set a "
                f"{'lower' if side == Trade.Side.BUY else 'higher'} limit."
            )
    if side == Trade.Side.BUY:
        one = min(limit_price, curve.price(term.supply, p0=term.p0, k=term.k))
        needed = one + curve.fee(one, basis_points=settings.MARKET_FEE_BASIS_POINTS)
        if cash < needed:
            raise InsufficientCash(
                f"You have {format_credits(cash)}; one share at your limit costs "
                f"{format_credits(needed)} with the fee. Lower the limit or sell something first."
            )
    elif holding(user, term) == 0:
        raise InsufficientShares(f"You hold no shares of “{term.phrase}” to sell.")
    return Order.objects.create(
        account_id=account_id,
        term=term,
        key=key,
        side=side,
        shares=shares,
        limit_price=limit_price,
        expires_at=expires_at,
    )


def cancel_order(*, user, order: Order) -> Order:
    """Cancel ``order`` if it is ``user``'s and still waiting; its fills so far stand.
    Raises ``OrderClosed`` when it already filled, expired or was cancelled."""
    if user is None or not getattr(user, "pk", None):
        raise InvalidRequest("Sign in to cancel an order.")
    with connection.cursor() as cursor:
        # The row's lock orders this behind a fill in progress; clock_timestamp() is read once
        # the lock is held, after that fill's trade.
        cursor.execute(
            f"""UPDATE {Order._meta.db_table} o SET state = 'cancelled',
                   reason = 'You cancelled it.', closed_at = clock_timestamp()
                FROM {Account._meta.db_table} a
                WHERE o.id = %s AND o.state = 'open' AND a.id = o.account_id AND a.user_id = %s
                RETURNING o.id""",
            [order.pk, user.pk],
        )
        cancelled = cursor.fetchone() is not None
    current = Order.objects.select_related("term", "account").filter(pk=order.pk).first()
    if current is None or current.account.user_id != user.pk:
        raise InvalidRequest("That is not one of your orders.")
    if not cancelled:
        raise OrderClosed(f"That order is already {state_words(current)}; nothing was cancelled.")
    return current


def state_words(order: Order) -> str:
    """``filled``, ``cancelled``, ``expired`` or ``waiting``, as the pages say it."""
    if order.state == Order.State.OPEN and order.expires_at and order.expires_at <= timezone.now():
        return "expired"
    return {
        Order.State.OPEN: "waiting",
        Order.State.FILLED: "filled",
        Order.State.CANCELLED: "cancelled",
        Order.State.EXPIRED: "expired",
    }[Order.State(order.state)]


# Expiry ---------------------------------------------------------------------------------------


def expire_due(*, term_id: int | None = None) -> int:
    """Close the waiting orders whose time is up (of one term, or all), telling each owner."""
    where = "AND o.term_id = %s" if term_id is not None else ""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH expired AS (
                    UPDATE {Order._meta.db_table} o SET state = 'expired',
                        reason = 'Its time ran out.', closed_at = clock_timestamp()
                    WHERE o.state = 'open' AND o.expires_at <= now() {where}
                    RETURNING o.id, o.account_id, o.term_id, o.side, o.shares, o.filled,
                              o.limit_price
                )
                SELECT e.id, a.user_id, e.term_id, t.phrase, e.side, e.shares, e.filled,
                       e.limit_price
                FROM expired e JOIN {Account._meta.db_table} a ON a.id = e.account_id
                JOIN {Term._meta.db_table} t ON t.id = e.term_id""",
            [term_id] if term_id is not None else [],
        )
        rows = cursor.fetchall()
    if not rows:
        return 0
    told = []
    for order_id, user_id, tid, phrase, side, shares, filled, limit_price in rows:
        order = Order(side=side, shares=shares, limit_price=limit_price, filled=filled)
        told.append(
            Notice(
                user_id=user_id,
                kind=Notice.Kind.ORDER,
                term_id=tid,
                order_id=order_id,
                text=f"{your_order(order, phrase)} expired with "
                f"{format_shares(filled) if filled else 'no shares'} filled.",
            )
        )
    Notice.objects.bulk_create(told)
    notices.flag(n.user_id for n in told)
    return len(rows)


# Filling ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FillOutcome:
    order_id: int
    trade: Trade | None  # None: nothing traded (cancelled unpayable, or closed meanwhile)
    cancelled: str = ""  # the reason, when the fill cancelled the order


class _Owner:
    """The order's owner as the trade path needs them: only the user's id."""

    def __init__(self, pk: int) -> None:
        self.pk = pk


def fill_pass(*, term_id: int, triggered_at: dt.datetime | None = None) -> list[FillOutcome]:
    """Fill the term's reachable waiting orders in priority order until none is reachable, or
    ``MARKET_ORDER_FILLS_PER_PASS`` fills were made (the worker then carries on)."""
    expire_due(term_id=term_id)
    done: list[FillOutcome] = []
    for _ in range(settings.MARKET_ORDER_FILLS_PER_PASS):
        outcome = atomic_with_retries(lambda: _fill_next(term_id, triggered_at))
        if outcome is None:
            return done
        done.append(outcome)
    from . import tasks  # the worker's task imports this module

    send_from_request(tasks.fill_orders, args=(term_id,), what="the rest of a fill pass")
    return done


def after_trade(term_id: int, at: dt.datetime) -> None:
    """The hook ``market.trading`` calls after a trade that left an order within reach. The
    trade is committed: a failure here is logged and left to the worker, never reported as the
    trade's."""
    try:
        fill_pass(term_id=term_id, triggered_at=at)
    except Exception:
        logger.exception(
            "Filling the orders of term %s after a trade failed; the sweep will", term_id
        )


trading.when_orders_reachable(after_trade)

_BEST = {
    Trade.Side.BUY: "AND limit_price >= %s ORDER BY limit_price DESC, created_at, id",
    Trade.Side.SELL: "AND limit_price <= %s ORDER BY limit_price, created_at, id",
}


def _best(cursor, term_id: int, side: str, price: int) -> tuple[int, dt.datetime] | None:
    cursor.execute(
        f"""SELECT id, created_at FROM {Order._meta.db_table}
            WHERE term_id = %s AND state = 'open' AND side = %s
              AND (expires_at IS NULL OR expires_at > now()) {_BEST[Trade.Side(side)]}
            LIMIT 1""",
        [term_id, side, price],
    )
    return cursor.fetchone()


def reachable_shares(*, side: str, remaining: int, limit: int, supply: int, p0: int, k: int) -> int:
    """How many of ``remaining`` shares the limit allows at ``supply``: a buy's last share costs
    at most ``limit`` (p0 + k·(supply + d − 1) ≤ limit), a sell's last share pays at least it
    (p0 + k·(supply − d) ≥ limit)."""
    if side == Trade.Side.BUY:
        if limit < p0 + k * supply:
            return 0
        return remaining if k == 0 else min(remaining, (limit - p0) // k - supply + 1)
    if supply == 0 or limit > p0 + k * (supply - 1):
        return 0
    if k == 0:
        return min(remaining, supply)
    floor_supply = max(0, -(-(limit - p0) // k))  # the least supply the last sale may leave
    return min(remaining, supply - floor_supply)


def _fill_next(term_id: int, triggered_at: dt.datetime | None) -> FillOutcome | None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT phrase, status, status_reason, p0, k, supply FROM {Term._meta.db_table} "
            "WHERE id = %s FOR UPDATE",
            [term_id],
        )
        row = cursor.fetchone()
        if row is None or row[1] != Term.Status.LISTED:
            return None
        phrase, _, _, p0, k, supply = row
        buy = _best(cursor, term_id, Trade.Side.BUY, p0 + k * supply)
        sell = _best(cursor, term_id, Trade.Side.SELL, p0 + k * (supply - 1)) if supply else None
        choices = [c for c in (buy, sell) if c is not None]
        if not choices:
            return None
        order_id = min(choices, key=lambda c: (c[1], c[0]))[0]
        order = (
            Order.objects.select_for_update().filter(pk=order_id, state=Order.State.OPEN).first()
        )
        if order is None:  # cancelled or expired between the look and the lock
            return FillOutcome(order_id, None)
        cursor.execute(
            f"SELECT user_id, cash FROM {Account._meta.db_table} WHERE id = %s FOR UPDATE",
            [order.account_id],
        )
        user_id, cash = cursor.fetchone()
        cursor.execute(
            "SELECT coalesce(max(shares), 0) FROM market_holding "
            "WHERE account_id = %s AND term_id = %s",
            [order.account_id, term_id],
        )
        held = cursor.fetchone()[0]
    wanted = min(
        reachable_shares(
            side=order.side,
            remaining=order.remaining,
            limit=order.limit_price,
            supply=supply,
            p0=p0,
            k=k,
        ),
        settings.MARKET_MAX_SHARES_PER_TRADE,
    )
    bp = settings.MARKET_FEE_BASIS_POINTS
    if order.side == Trade.Side.BUY:
        can = min(wanted, curve.shares_for_total(supply, cash, p0=p0, k=k, basis_points=bp))
    else:
        can = min(wanted, held)
    term = Term(pk=term_id, phrase=phrase, p0=p0, k=k, supply=supply)
    trade = _trade_fill(order=order, term=term, user_id=user_id, shares=can) if can else None
    reason = ""
    if can < wanted:
        reason = _unpayable(order=order, term=term, cash=cash, held=held, traded=trade)
    _record(
        order=order,
        trade=trade,
        reason=reason,
        user_id=user_id,
        phrase=phrase,
        triggered_at=triggered_at,
    )
    return FillOutcome(order.pk, trade, reason)


def _trade_fill(*, order: Order, term: Term, user_id: int, shares: int) -> Trade:
    bp = settings.MARKET_FEE_BASIS_POINTS
    if order.side == Trade.Side.BUY:
        amount = curve.cost(term.supply, shares, p0=term.p0, k=term.k)
        limit = amount + curve.fee(amount, basis_points=bp)
    else:
        amount = curve.proceeds(term.supply, shares, p0=term.p0, k=term.k)
        limit = amount - curve.fee(amount, basis_points=bp)
    key = fill_key(order.pk, order.fills + 1)
    trade = trading._place(
        user=_Owner(user_id), term=term, side=order.side, shares=shares, limit=limit, key=key
    )
    if trade.repeated and (trade.side, trade.shares, trade.term_id) != (
        order.side,
        shares,
        term.pk,
    ):  # a fill's key names one fill; the order row's lock makes a second use impossible
        raise AssertionError(f"fill key {key} names another trade: {trade}")
    return trade


def _unpayable(*, order: Order, term: Term, cash: int, held: int, traded: Trade | None) -> str:
    """Why an order whose limit reached further than the owner's cash or shares is cancelled."""
    if order.side == Trade.Side.SELL:
        if not held:
            return f"You no longer hold any shares of “{term.phrase}” to sell."
        return f"You held only {format_shares(held)} of “{term.phrase}”, and they were sold."
    after = term.supply + (traded.shares if traded else 0)
    next_share = curve.price(after, p0=term.p0, k=term.k)
    with_fee = next_share + curve.fee(next_share, basis_points=settings.MARKET_FEE_BASIS_POINTS)
    left = cash - (traded.total if traded else 0)
    return (
        f"Not enough cash: the next share cost {format_credits(with_fee)} with the fee, and "
        f"you had {format_credits(left)}."
    )


def your_order(order: Order, phrase: str) -> str:
    """``Your order to buy up to 10 shares of “KV cache” at most 1.20 credits a share``."""
    what = describe(order, phrase)
    return f"Your order to {what[0].lower()}{what[1:]}"


def _record(
    *, order: Order, trade: Trade | None, reason: str, user_id: int, phrase: str, triggered_at
) -> None:
    """The order's new state, its fill row and the owner's notice, in the fill's transaction."""
    fields: dict[str, object] = {}
    if trade is not None:
        order.filled += trade.shares
        order.fills += 1
        OrderFill.objects.create(
            order=order, number=order.fills, trade=trade, triggered_at=triggered_at
        )
        fields |= {"filled": order.filled, "fills": order.fills}
        if order.filled == order.shares:
            order.state = Order.State.FILLED
    if reason:
        order.state, order.reason = Order.State.CANCELLED, reason
        fields["reason"] = reason
    if order.state != Order.State.OPEN:
        # The database's clock, as for the trade (its now() is this transaction's start).
        fields |= {"state": order.state, "closed_at": Now()}
    Order.objects.filter(pk=order.pk).update(**fields)
    text = your_order(order, phrase)
    if trade is not None:
        verb = "bought" if trade.side == Trade.Side.BUY else "sold"
        text += (
            f" {verb} {format_shares(trade.shares)} for {format_credits(trade.total)} "
            f"(fee {format_credits(trade.fee, unit=False)})"
        )
        if order.state == Order.State.FILLED:
            text += " and is filled."
        elif reason:
            text += f", then was cancelled: {reason}"
        else:
            text += f"; {format_shares(order.remaining)} still wait."
    else:
        text += f" was cancelled: {reason}"
    notices.tell(
        user_id=user_id,
        kind=Notice.Kind.ORDER,
        text=text,
        term_id=order.term_id,
        order_id=order.pk,
    )


# The worker's sweep ---------------------------------------------------------------------------


def reachable_terms() -> list[int]:
    """Terms with a waiting order within reach of the price now."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT DISTINCT o.term_id FROM {Order._meta.db_table} o
                JOIN {Term._meta.db_table} t ON t.id = o.term_id
                WHERE o.state = 'open' AND t.status = 'listed'
                  AND (o.expires_at IS NULL OR o.expires_at > now())
                  AND ((o.side = 'buy' AND o.limit_price >= t.p0 + t.k * t.supply)
                    OR (o.side = 'sell' AND t.supply > 0
                        AND o.limit_price <= t.p0 + t.k * (t.supply - 1)))
                ORDER BY 1"""
        )
        return [row[0] for row in cursor.fetchall()]


def sweep() -> int:
    """Expire what is due and fill what is reachable, on every term; returns the fills."""
    expire_due()
    return sum(
        sum(1 for o in fill_pass(term_id=term_id) if o.trade) for term_id in reachable_terms()
    )


def orders_of(*, user, term_id: int | None = None, limit: int = 50) -> list[Order]:
    """The user's orders, waiting first, then the most recent."""
    qs = (
        Order.objects.filter(account__user=user)
        .select_related("term")
        .prefetch_related("fill_rows__trade")
    )
    if term_id is not None:
        qs = qs.filter(term_id=term_id)
    orders = list(qs.order_by("-created_at", "-id")[:limit])
    return sorted(orders, key=lambda o: o.state != Order.State.OPEN)
