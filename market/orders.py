"""Limit orders on the curve: placing, cancelling, expiring, and filling them.

``place_order`` leaves an order; one whose limit is already reachable fills at once as far as
its limit allows, and the rest waits. A waiting order fills when a trade moves the price within
its reach: the trade function says so (``orders_reachable``, market/sql/place_trade.sql) and
``market.trading`` calls ``after_trade`` (a ``fill_pass``) right after that trade commits, in
the same request.
The worker sweeps every minute for what a request could not finish (``sweep``).

Each fill is an ordinary trade through the one trade function, ``market_place_trade``, made
by the fill procedure ``market_fill_orders`` (market/sql/fill_orders.sql): one call fills a
whole pass, and commits after each fill, so each fill is one transaction under the locks of
every market write:

    term row (FOR UPDATE) → the order row (FOR UPDATE) → the owner's account row (FOR UPDATE,
    as the trade function takes it) → the trade function (term and account again: held) →
    the order's filled count, a fill row and the owner's notice → COMMIT

the order every market write uses (term, then account), with the order row between them. A
cancel or an expiry takes only the order row's lock, so it waits for a fill in progress, and a
fill after it finds the order closed: a cancelled or expired order never fills. The fill's
trade key is derived from the order and the fill's number
(``market.models.orders.fill_key``), so a retried fill trades once.

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

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from peerrevenue.db import atomic_with_retries, violates
from peerrevenue.queueing import send_from_request
from peerrevenue.retries import database_task

from . import curve
from .cash import balance, holding
from .models import Account, Order, Term, Trade
from .refusals import (
    InsufficientCash,
    InsufficientShares,
    InvalidQuantity,
    InvalidRequest,
    TermNotTradable,
    TradeError,
    untradable,
)
from .trade_statements import check_key, fee_shard, fetch_row
from .units import format_credits

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
    key = check_key(key)
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
    # The order is placed (committed, unless the caller holds a transaction: the fill pass
    # commits each fill, so it waits for the caller's COMMIT). A failure to fill it now is the
    # worker's to retry.
    created = order.created_at
    transaction.on_commit(lambda: after_trade(current.pk, created))
    order.refresh_from_db()
    return order


def _insert_order(
    *, user, term: Term, side: str, shares: int, limit_price: int, expires_at, key: str, cash: int
) -> Order:
    # The account row's lock serialises one trader's placements: the open-order count and the
    # crossing check hold. The new order's foreign key takes a KEY SHARE lock on the term row at
    # COMMIT (Django's constraints are deferred), which waits for a trade or fill holding the
    # term, and that fill may be waiting for this account: so the term's KEY SHARE is taken
    # first, keeping the order of every market write (term, then account).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Term._meta.db_table} WHERE id = %s FOR KEY SHARE", [term.pk]
        )
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
    """Close the waiting orders whose time is up (of one term, or all), telling each owner
    (``market_expire_orders``, market/sql/fill_orders.sql, writes the notices)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT market_expire_orders(%s::bigint)", [term_id])
        told = [row[0] for row in cursor.fetchall()]
    return len(told)


# Filling ------------------------------------------------------------------------------------

# Casts pin the argument types, so the statement reads the same whatever the values.
_FILL_SQL = (
    "CALL market_fill_orders(%s::bigint, %s::timestamptz, %s::integer, %s::integer, "
    "%s::bigint, %s::integer)"
)


def fill_pass(*, term_id: int, triggered_at: dt.datetime | None = None) -> int:
    """Fill the term's reachable waiting orders in priority order until none is reachable, or
    ``MARKET_ORDER_FILLS_PER_PASS`` steps were taken (the worker then carries on); returns the
    fills made.

    The whole pass is one call of the procedure ``market_fill_orders``
    (market/sql/fill_orders.sql), which commits after each fill: each fill is its own
    transaction under the locks of every market write (see the module's docstring), and the
    pass costs one round trip. It must therefore run outside a transaction; ``after_trade``
    waits for the caller's to commit.
    """
    if connection.in_atomic_block:
        raise RuntimeError("A fill pass commits each fill: run it outside a transaction.")
    shard = fee_shard(term_id)
    params = (
        term_id,
        triggered_at,
        settings.MARKET_FEE_BASIS_POINTS,
        shard,
        settings.MARKET_MAX_SHARES_PER_TRADE,
        settings.MARKET_ORDER_FILLS_PER_PASS,
    )
    made = 0
    # At most twice: the term's fee shard may be missing the first time (nothing was written).
    for _ in range(2):
        # A retry after a deadlock goes on where the pass stopped: the fills before it committed.
        fills, _told, unfinished, lacking = atomic_with_retries(
            lambda: fetch_row(_FILL_SQL, params), statement=True
        )
        made += fills
        if lacking != "fee_account":
            break
        Account.objects.system(Account.Kind.FEES, shard=shard)
    else:
        raise AssertionError(f"market_fill_orders still lacks the fee shard {shard}")
    if unfinished:
        send_from_request(fill_orders, args=(term_id,), what="the rest of a fill pass")
    return made


# The pass queues its own rest, so the task lives beside it; its name is the one it had in
# market/tasks.py, so queued messages still find it.
@database_task("market.tasks.fill_orders")
def fill_orders(term_id: int) -> int:
    """Fill a term's reachable orders (what a request's pass left over); safe to run again."""
    return fill_pass(term_id=term_id)


def after_trade(term_id: int, at: dt.datetime) -> None:
    """What ``market.trading`` calls after a trade that left an order within reach. The
    trade is committed: a failure here is logged and left to the worker, never reported as the
    trade's."""
    try:
        fill_pass(term_id=term_id, triggered_at=at)
    except Exception:
        logger.exception(
            "Filling the orders of term %s after a trade failed; the sweep will", term_id
        )


def reachable_shares(*, side: str, remaining: int, limit: int, supply: int, p0: int, k: int) -> int:
    """How many of ``remaining`` shares the limit allows at ``supply``: a buy's last share costs
    at most ``limit`` (p0 + k·(supply + d − 1) ≤ limit), a sell's last share pays at least it
    (p0 + k·(supply − d) ≥ limit). The rule ``market_order_reachable_shares`` applies in SQL
    (tests/market/test_fill_procedure.py holds the two to the same results)."""
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
    return sum(fill_pass(term_id=term_id) for term_id in reachable_terms())


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
