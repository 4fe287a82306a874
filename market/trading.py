"""Trading: quotes, buys and sells on a term's curve.

This module is the only code that changes a term's supply or reserve and the holdings; cash
moves here with trades, and otherwise only through ``market.cash`` (grants, adjustments) and
``market.dividends`` (payouts), all as balanced ledger transactions.

Concurrency. A trade is one database transaction. It locks the term row, then the trader's
account row (``SELECT … FOR UPDATE``, always in that order, so two trades can never wait on
each other in a cycle), checks, and then writes with relative updates (``supply = supply +
n``), so the database does the arithmetic on the locked rows. The only other row a trade locks
is its fee account row, in its last statement just before COMMIT, so that lock is held
briefly; the fee account is sharded by term (see ``Account``) so trades on different terms
rarely meet there. Should Postgres still report a serialization failure or a deadlock, the
whole transaction is retried with bounded, jittered backoff (``peerrevenue.db``).

Round trips. A trade is one call of the server-side function ``market_place_trade``
(market/migrations/0005), made in autocommit mode so that the call is the whole transaction:
one round trip per trade. The function decides and writes; when it refuses, ``_decide`` (the
one place that words a refusal, for quotes and trades alike) says why from the facts it returns.

Idempotency. A trade carries a client key, unique per account. A repeated key returns the
original trade, marked ``repeated``, and changes nothing: the key is re-checked after the
account row is locked, and two repeats that race past that check (through different term
locks) are stopped by the unique constraint, after which the loser returns the winner's trade.

Limits. ``max_cost`` (buy) and ``min_proceeds`` (sell) include the fee: they bound what leaves
or reaches the trader's cash. ``None`` means no limit.

Limit orders. ``place_order`` and ``cancel_order`` live in ``market.orders`` (re-exported
here). The trade function also says whether a waiting order came within reach of the price a
trade left; if so, right after the trade commits, ``market.orders.after_trade`` fills them, in
the same request.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from peerrevenue.db import atomic_with_retries, retry_count, violates

from . import curve
from .cash import adjust_balance, balance, cash_of, holding, open_account
from .models import Account, Term, Trade
from .orders import after_trade, cancel_order, place_order
from .refusals import (
    NO_SUCH_TERM,
    InsufficientCash,
    InsufficientShares,
    InvalidQuantity,
    InvalidRequest,
    Slippage,
    TermNotTradable,
    TradeError,
    untradable,
)
from .trade_statements import check_key, fee_shard, fetch_row
from .units import format_credits, format_shares

# The public names: scripts and checks outside the project import them from here.
__all__ = [
    "InsufficientCash",
    "InsufficientShares",
    "InvalidQuantity",
    "InvalidRequest",
    "Quote",
    "Slippage",
    "TermNotTradable",
    "TradeError",
    "adjust_balance",
    "balance",
    "buy",
    "cancel_order",
    "holding",
    "open_account",
    "place_order",
    "quote",
    "retry_count",
    "sell",
]


@dataclass(frozen=True, slots=True)
class Quote:
    """What a trade would do now. ``total`` is what a buyer pays or a seller receives, fee
    included; ``average_price`` is ``amount / shares`` rounded to the nearest µ¢. ``problem``
    says what would stop the trader it was quoted for from placing it (empty: nothing)."""

    side: str
    shares: int
    amount: int
    fee: int
    total: int
    average_price: int
    price_before: int
    price_after: int
    supply_before: int
    supply_after: int
    problem: str = ""


# Validation -------------------------------------------------------------------------------


def _check_quantity(shares: object) -> int:
    limit = settings.MARKET_MAX_SHARES_PER_TRADE
    if type(shares) is not int or not 1 <= shares <= limit:
        raise InvalidQuantity(
            f"Enter a whole number of shares from 1 to {limit:,} (got {shares!r})."
        )
    return shares


def _check_limit(name: str, value: object) -> int | None:
    if value is not None and (type(value) is not int or value < 0):
        raise InvalidRequest(f"{name} must be a whole number of µ¢ or None (got {value!r}).")
    return value


# Quotes and trades ------------------------------------------------------------------------


def _price_trade(*, side: str, shares: int, supply: int, p0: int, k: int) -> Quote:
    if side == Trade.Side.BUY:
        amount = curve.cost(supply, shares, p0=p0, k=k)
        after = supply + shares
    else:
        amount = curve.proceeds(supply, shares, p0=p0, k=k)
        after = supply - shares
    fee = curve.fee(amount, basis_points=settings.MARKET_FEE_BASIS_POINTS)
    return Quote(
        side=side,
        shares=shares,
        amount=amount,
        fee=fee,
        total=amount + fee if side == Trade.Side.BUY else amount - fee,
        average_price=(2 * amount + shares) // (2 * shares),
        price_before=curve.price(supply, p0=p0, k=k),
        price_after=curve.price(after, p0=p0, k=k),
        supply_before=supply,
        supply_after=after,
    )


def quote(*, term: Term, side: str, shares: int, user=None) -> Quote:
    """What buying or selling ``shares`` of ``term`` would cost or return right now.

    Raises a ``TradeError`` when there is nothing to quote (the term cannot be traded, or the
    shares to sell are not there). For a signed-in ``user`` the quote is checked against their
    own cash and shares, and its ``problem`` says what would stop them placing it. Only reads.
    """
    _check_quantity(shares)
    if side not in Trade.Side.values:
        raise InvalidRequest(f"Choose buy or sell (got {side!r}).")
    current = Term.objects.filter(pk=term.pk).first()
    if current is None:
        raise TermNotTradable(NO_SUCH_TERM)
    cash = held = None
    if user is not None and getattr(user, "pk", None):
        cash = cash_of(user)
        # Before their first trade a user may have no account; trading opens it with the grant.
        cash = settings.MARKET_STARTING_GRANT if cash is None else cash
        held = holding(user, current)
    q, refusal = _decide(term=current, side=side, shares=shares, limit=None, cash=cash, held=held)
    return q if refusal is None else _with_problem(q, str(refusal))


def _with_problem(q: Quote, problem: str) -> Quote:
    return Quote(**{**{name: getattr(q, name) for name in Quote.__slots__}, "problem": problem})


def buy(*, user, term: Term, shares: int, max_cost: int | None, key: str) -> Trade:
    """Buy ``shares`` of ``term``. ``max_cost`` bounds amount + fee (µ¢); None: no limit."""
    return _trade(
        user=user,
        term=term,
        side=Trade.Side.BUY,
        shares=_check_quantity(shares),
        limit=_check_limit("max_cost", max_cost),
        key=check_key(key),
    )


def sell(*, user, term: Term, shares: int, min_proceeds: int | None, key: str) -> Trade:
    """Sell ``shares`` of ``term``. ``min_proceeds`` bounds amount − fee (µ¢); None: no limit."""
    return _trade(
        user=user,
        term=term,
        side=Trade.Side.SELL,
        shares=_check_quantity(shares),
        limit=_check_limit("min_proceeds", min_proceeds),
        key=check_key(key),
    )


def trade(*, user, term: Term, side: str, shares: int, limit: int | None, key: str) -> Trade:
    """A buy or a sell by ``side``, as the trade form and the API send it: ``limit`` is the
    buy's ``max_cost`` or the sell's ``min_proceeds``."""
    if side == Trade.Side.BUY:
        return buy(user=user, term=term, shares=shares, max_cost=limit, key=key)
    return sell(user=user, term=term, shares=shares, min_proceeds=limit, key=key)


def _trade(*, user, term: Term, side: str, shares: int, limit: int | None, key: str) -> Trade:
    if user is None or not getattr(user, "pk", None):
        raise InvalidRequest("Sign in to trade.")
    try:
        done = _place(user=user, term=term, side=side, shares=shares, limit=limit, key=key)
    except IntegrityError as exc:
        if not violates(exc, "unique_trade_key_per_account"):
            raise
        # A repeat of this key committed between our key check and our insert (it came in
        # through another term's lock); ours rolled back, so return the one that happened.
        return _repeated(Trade.objects.select_related("term").get(account__user=user, key=key))
    if done.orders_reachable:
        # After COMMIT (at once in autocommit, where the trade was its own transaction): a
        # fill must see the trade, and must not be undone with the caller's transaction.
        term_id, at = done.term_id, done.created_at
        transaction.on_commit(lambda: after_trade(term_id, at))
    return done


def _repeated(trade: Trade) -> Trade:
    # Marks the original trade returned for a repeated key, so a page can say it was already
    # placed instead of announcing it again.
    trade.repeated = True
    return trade


def _decide(
    *, term: Term, side: str, shares: int, limit: int | None, cash: int | None, held: int | None
) -> tuple[Quote, TradeError | None]:
    """The one refusal decider, for quotes and trades alike.

    Prices ``shares`` on the (locked, for a trade) ``term`` for a trader with ``cash`` µ¢ and
    ``held`` shares (None: not known, as for a visitor's quote), and returns the quote with what
    would stop the trade, or None. Raises when there is nothing to price at all.
    """
    refusal = untradable(term)
    if refusal is not None:
        raise refusal
    if side == Trade.Side.SELL and held is not None and shares > held:
        raise InsufficientShares(
            f"You hold {format_shares(held)} of “{term.phrase}” and cannot sell {shares:,}. "
            + (f"Sell at most {held:,}." if held else "Buy some first.")
        )
    if side == Trade.Side.SELL and shares > term.supply:
        raise InsufficientShares(
            f"Only {format_shares(term.supply)} of “{term.phrase}” exist; "
            f"quote at most {term.supply:,}."
        )
    q = _price_trade(side=side, shares=shares, supply=term.supply, p0=term.p0, k=term.k)
    if side == Trade.Side.BUY:
        if cash is not None and q.total > cash:
            affordable = curve.shares_for_total(
                term.supply,
                cash,
                p0=term.p0,
                k=term.k,
                basis_points=settings.MARKET_FEE_BASIS_POINTS,
            )
            return q, InsufficientCash(
                f"Buying {format_shares(shares)} of “{term.phrase}” costs "
                f"{format_credits(q.total)} with the fee, but you have {format_credits(cash)}. "
                + (f"You can afford {affordable:,}." if affordable else "Sell something first.")
            )
        if limit is not None and q.total > limit:
            return q, Slippage(
                f"The price moved: {format_shares(shares)} of “{term.phrase}” now cost "
                f"{format_credits(q.total)} with the fee, above your limit of "
                f"{format_credits(limit)}. Check the new quote and try again."
            )
    elif limit is not None and q.total < limit:
        return q, Slippage(
            f"The price moved: selling {format_shares(shares)} of “{term.phrase}” now returns "
            f"{format_credits(q.total)} after the fee, below your minimum of "
            f"{format_credits(limit)}. Check the new quote and try again."
        )
    return q, None


def _traded(
    *, term: Term, account_id: int, key: str, q: Quote, pk: int, transaction_id: int, at
) -> Trade:
    """The Trade that was written for quote ``q``, with ``term`` moved to its new state."""
    trade = Trade(
        pk=pk,
        account_id=account_id,
        term=term,
        transaction_id=transaction_id,
        key=key,
        side=q.side,
        shares=q.shares,
        amount=q.amount,
        fee=q.fee,
        supply_before=q.supply_before,
        supply_after=q.supply_after,
        price_before=q.price_before,
        price_after=q.price_after,
        term_version=term.version + 1,
        created_at=at,
    )
    trade._state.adding = False
    term.supply = q.supply_after
    term.reserve += q.amount if q.side == Trade.Side.BUY else -q.amount
    term.version = trade.term_version
    return trade


# One function call ------------------------------------------------------------

# Casts pin the argument types, so the plan psycopg prepares is reused whatever the values.
_PLACE_TRADE_SQL = (
    "SELECT * FROM market_place_trade(%s::bigint, %s::bigint, %s::text, %s::bigint, "
    "%s::bigint, %s::text, %s::integer, %s::integer)"
)


def _place(*, user, term: Term, side: str, shares: int, limit: int | None, key: str) -> Trade:
    """Trade through ``market_place_trade`` (market/migrations/0005, 0010), which locks, checks and
    writes in one statement. Outside a transaction that statement is the whole transaction, so
    a trade costs a single round trip; the function decides and this explains its refusals."""
    # No amount in a bigint column exceeds curve.BIGINT_MAX, so the clamped limit allows and refuses
    # the same trades as the trader's own.
    sql_limit = None if limit is None else min(limit, curve.BIGINT_MAX)
    shard = fee_shard(term.pk)
    params = (
        user.pk,
        term.pk,
        side,
        shares,
        sql_limit,
        key,
        settings.MARKET_FEE_BASIS_POINTS,
        shard,
    )
    # At most three calls: the account, then the fee shard, may be missing the first time.
    for _ in range(3):
        row = atomic_with_retries(lambda: fetch_row(_PLACE_TRADE_SQL, params), statement=True)
        result, trade_id, transaction_id, traded_at, account_id, cash, held, *term_row = row
        term_row, orders_reachable = term_row[:-1], term_row[-1]
        if result == "no_account":
            # A user from before the market existed: open the account, then trade.
            open_account(user=user)
        elif result == "no_fee_account":
            Account.objects.system(Account.Kind.FEES, shard=shard)
        else:
            break
    else:
        raise AssertionError(f"market_place_trade still lacks a row after creating it: {row}")
    if result == "no_term":
        raise TermNotTradable(NO_SUCH_TERM)
    if result == "repeat":
        return _repeated(Trade.objects.select_related("term").get(pk=trade_id))
    locked = copy.copy(term)
    (
        locked.phrase,
        locked.status,
        locked.status_reason,
        locked.p0,
        locked.k,
        locked.supply,
        locked.reserve,
        locked.version,
    ) = term_row
    q, refusal = _decide(term=locked, side=side, shares=shares, limit=limit, cash=cash, held=held)
    if result == "traded" and refusal is None:
        done = _traded(
            term=locked,
            account_id=account_id,
            key=key,
            q=q,
            pk=trade_id,
            transaction_id=transaction_id,
            at=traded_at,
        )
        done.orders_reachable = bool(orders_reachable)
        return done
    if result == "refused" and refusal is not None:
        raise refusal
    raise AssertionError(f"market_place_trade and market.trading disagree: {row}, {refusal!r}")
