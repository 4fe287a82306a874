"""Trading, and every other movement of cash and shares.

This module is the only code that changes cash, holdings, a term's supply or its reserve:
trades, starting grants, dividend payouts and admin balance adjustments all come through here
and all write balanced ledger transactions.

Concurrency. Each operation is one database transaction. A trade locks the term row, then the
trader's account row (``SELECT … FOR UPDATE``, always in that order, so two trades can never
wait on each other in a cycle), checks, and then writes with relative updates
(``supply = supply + n``), so the database does the arithmetic on the locked rows. The only
other row a trade locks is its fee account row, in its last statement just before COMMIT, so
that lock is held briefly; the fee account is sharded by term (see ``Account``) so trades on
different terms rarely meet there. Dividends lock the term, then the holders' accounts in id
order, then the issuance account; adjustments lock the account, then issuance. Should Postgres
still report a serialization failure or a deadlock, the whole transaction is retried with
bounded, jittered exponential backoff.

Round trips. A trade is one call of the server-side function ``market_place_trade``
(market/migrations/0005), made in autocommit mode so that the call is the whole transaction:
one round trip per trade. The function decides and writes; when it refuses, this module works
out the same refusal from the facts it returns and says why.

Idempotency. A trade carries a client key, unique per account. A repeated key returns the
original trade and changes nothing: the key is re-checked after the account row is locked, and
two repeats that race past that check (through different term locks) are stopped by the unique
constraint, after which the loser returns the winner's trade.

Limits. ``max_cost`` (buy) and ``min_proceeds`` (sell) include the fee: they bound what leaves
or reaches the trader's cash. ``None`` means no limit.
"""

from __future__ import annotations

import copy
import datetime as dt
import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import psycopg.errors
from django.conf import settings
from django.db import IntegrityError, OperationalError, connection, transaction
from django.db.models import F, OuterRef, Subquery
from django.utils import timezone

from . import curve
from .models import Account, DividendEvent, Entry, Holding, LedgerTransaction, Term, Trade
from .units import format_credits

logger = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ATTEMPTS = 6
BACKOFF_BASE_SECONDS = 0.005
BACKOFF_CAP_SECONDS = 0.25
KEY_MAX_LENGTH = Trade._meta.get_field("key").max_length


# Refusals ---------------------------------------------------------------------------------


class TradeError(Exception):
    """A refused trade or transfer. The message tells the person what to do about it."""


class InsufficientCash(TradeError):
    pass


class InsufficientShares(TradeError):
    pass


class Slippage(TradeError):
    """The price moved past the trader's limit (max_cost / min_proceeds, fee included)."""


class TermNotTradable(TradeError):
    pass


class InvalidQuantity(TradeError):
    pass


class InvalidRequest(TradeError):
    """A malformed request other than the quantity, e.g. a missing idempotency key."""


# Results ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Quote:
    """What a trade would do now. ``total`` is what a buyer pays or a seller receives, fee
    included; ``average_price`` is ``amount / shares`` rounded to the nearest µ¢."""

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


@dataclass(frozen=True, slots=True)
class DividendPayout:
    term_id: int
    papers: int  # mentioning papers paid for now (not before)
    shares: int  # shares outstanding that were paid
    amount: int  # µ¢ minted and paid out


# Retries ----------------------------------------------------------------------------------

_retry_lock = threading.Lock()
_retries = 0


def retry_count() -> int:
    """Transactions retried (serialization failure or deadlock) by this process so far."""
    return _retries


def _is_retryable(exc: OperationalError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected)


def _violates(exc: IntegrityError, constraint: str) -> bool:
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None) == constraint


def _atomic_with_retries(work: Callable[[], T], *, statement: bool = False) -> T:
    """Run ``work`` in one transaction, retrying on serialization failure or deadlock.

    ``statement=True`` says ``work`` is a single SQL statement: outside a transaction it then
    runs in autocommit mode, where the statement is its own transaction and BEGIN and COMMIT
    cost no round trips of their own.
    """
    global _retries
    if connection.in_atomic_block:
        # The caller owns the transaction; replaying only our part of it would be wrong, so run
        # once in a savepoint and let the caller's own retry policy (if any) handle failures.
        with transaction.atomic():
            return work()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            if statement:
                return work()
            with transaction.atomic():
                return work()
        except OperationalError as exc:
            if attempt == MAX_ATTEMPTS or not _is_retryable(exc):
                raise
            with _retry_lock:
                _retries += 1
            delay = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
            logger.info("Retrying market transaction after %s (attempt %d)", exc, attempt)
            time.sleep(random.uniform(0, delay))  # full jitter: colliding retries spread out
    raise AssertionError("unreachable")


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


def _check_key(key: object) -> str:
    if not isinstance(key, str) or not key or len(key) > KEY_MAX_LENGTH:
        raise InvalidRequest(
            f"Each trade needs a key of 1 to {KEY_MAX_LENGTH} characters so that a repeated "
            "submission is not traded twice; reload the page and try again."
        )
    return key


def _refuse_untradable(term: Term) -> None:
    if term.status == Term.Status.HALTED:
        reason = f" ({term.status_reason.strip().rstrip('.')})" if term.status_reason else ""
        raise TermNotTradable(
            f"Trading in “{term.phrase}” is halted{reason}. "
            "Your holdings are safe; try again when it is relisted."
        )
    if term.status != Term.Status.LISTED:
        raise TermNotTradable(
            f"“{term.phrase}” is delisted and can no longer be traded."
            + (f" Reason: {term.status_reason}" if term.status_reason else "")
        )


def _shares(n: int) -> str:
    return f"{n:,} share" if n == 1 else f"{n:,} shares"


# Accounts ---------------------------------------------------------------------------------


def _mint(
    *, account_id: int, amount: int, kind: str, memo: str, by: object = None
) -> LedgerTransaction:
    """Move ``amount`` µ¢ from issuance to an account (negative: back to issuance).

    The caller holds the account's row lock (or has just created the row); issuance is
    updated last so its lock is held only until commit.
    """
    issuance = Account.objects.system(Account.Kind.ISSUANCE)
    txn = LedgerTransaction.objects.create(
        kind=kind, memo=memo, created_by_id=getattr(by, "pk", None)
    )
    Entry.objects.bulk_create(
        [
            Entry(transaction=txn, account_id=account_id, asset=Entry.Asset.CASH, amount=amount),
            Entry(transaction=txn, account_id=issuance.pk, asset=Entry.Asset.CASH, amount=-amount),
        ]
    )
    Account.objects.filter(pk=issuance.pk).update(cash=F("cash") - amount)
    return txn


def open_account(*, user) -> Account:
    """The user's cash account, created with the starting grant if it does not exist yet.

    Account and grant are written in one transaction, so nobody ever sees an account
    without its grant.
    """

    def work() -> Account:
        account = Account.objects.filter(user=user).first()
        if account is not None:
            return account
        grant = settings.MARKET_STARTING_GRANT
        account = Account.objects.create(kind=Account.Kind.USER, user=user, cash=grant)
        if grant:
            _mint(
                account_id=account.pk,
                amount=grant,
                kind=LedgerTransaction.Kind.GRANT,
                memo=f"Starting grant for {user}",
            )
        return account

    try:
        return _atomic_with_retries(work)
    except IntegrityError:
        # Two first requests of a new user raced and the other one created the account.
        account = Account.objects.filter(user=user).first()
        if account is None:
            raise
        return account


def balance(user) -> int:
    """The user's cash in µ¢."""
    cash = Account.objects.filter(user=user).values_list("cash", flat=True).first()
    return open_account(user=user).cash if cash is None else cash


def holding(user, term: Term) -> int:
    """How many shares of ``term`` the user holds."""
    shares = (
        Holding.objects.filter(account__user=user, term=term)
        .values_list("shares", flat=True)
        .first()
    )
    return shares or 0


def adjust_balance(
    *, account: Account, amount: int, reason: str, by: object = None
) -> LedgerTransaction:
    """Credit (or, negative, debit) a user's cash from/to issuance, with a recorded reason."""
    if type(amount) is not int or amount == 0:
        raise InvalidQuantity("Enter a non-zero whole number of µ¢ to add or remove.")
    reason = (reason or "").strip()
    if not reason:
        raise InvalidRequest("Say why the balance is adjusted; the reason goes in the ledger.")
    if account.kind != Account.Kind.USER:
        raise InvalidRequest("Only user accounts can be adjusted.")

    def work() -> LedgerTransaction:
        cash = Account.objects.select_for_update().values_list("cash", flat=True).get(pk=account.pk)
        if cash + amount < 0:
            raise InsufficientCash(
                f"{account} has {format_credits(cash)}; removing {format_credits(-amount)} "
                f"would make it negative. Remove at most {format_credits(cash)}."
            )
        Account.objects.filter(pk=account.pk).update(cash=F("cash") + amount)
        return _mint(
            account_id=account.pk,
            amount=amount,
            kind=LedgerTransaction.Kind.ADJUSTMENT,
            memo=reason,
            by=by,
        )

    return _atomic_with_retries(work)


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


def quote(*, term: Term, side: str, shares: int) -> Quote:
    """What buying or selling ``shares`` of ``term`` would cost or return right now."""
    _check_quantity(shares)
    if side not in Trade.Side.values:
        raise InvalidRequest(f"Choose buy or sell (got {side!r}).")
    current = Term.objects.filter(pk=term.pk).first()
    if current is None:
        raise TermNotTradable("That term does not exist (any more); pick one from the market.")
    _refuse_untradable(current)
    if side == Trade.Side.SELL and shares > current.supply:
        raise InsufficientShares(
            f"Only {_shares(current.supply)} of “{current.phrase}” exist; "
            f"quote at most {current.supply:,}."
        )
    return _price_trade(side=side, shares=shares, supply=current.supply, p0=current.p0, k=current.k)


def buy(*, user, term: Term, shares: int, max_cost: int | None, key: str) -> Trade:
    """Buy ``shares`` of ``term``. ``max_cost`` bounds amount + fee (µ¢); None: no limit."""
    return _trade(
        user=user,
        term=term,
        side=Trade.Side.BUY,
        shares=_check_quantity(shares),
        limit=_check_limit("max_cost", max_cost),
        key=_check_key(key),
    )


def sell(*, user, term: Term, shares: int, min_proceeds: int | None, key: str) -> Trade:
    """Sell ``shares`` of ``term``. ``min_proceeds`` bounds amount − fee (µ¢); None: no limit."""
    return _trade(
        user=user,
        term=term,
        side=Trade.Side.SELL,
        shares=_check_quantity(shares),
        limit=_check_limit("min_proceeds", min_proceeds),
        key=_check_key(key),
    )


def _trade(*, user, term: Term, side: str, shares: int, limit: int | None, key: str) -> Trade:
    if user is None or not getattr(user, "pk", None):
        raise InvalidRequest("Sign in to trade.")
    try:
        return _place(user=user, term=term, side=side, shares=shares, limit=limit, key=key)
    except IntegrityError as exc:
        if not _violates(exc, "unique_trade_key_per_account"):
            raise
        # A repeat of this key committed between our key check and our insert (it came in
        # through another term's lock); ours rolled back, so return the one that happened.
        return Trade.objects.select_related("term").get(account__user=user, key=key)


def _fee_shard(term_id: int) -> int:
    # By term: trades on one term already queue on its lock, so they lose nothing by sharing
    # a fee row, while trades on different terms mostly write different fee rows.
    return term_id % Account.FEE_SHARDS


def _priced_or_refused(
    *, term: Term, side: str, shares: int, limit: int | None, cash: int, held: int
) -> Quote:
    """The quote for a trade on the locked ``term`` by a trader with ``cash`` and ``held``
    shares, or the refusal (a ``TradeError`` saying what to do) if it cannot happen."""
    _refuse_untradable(term)
    if side == Trade.Side.SELL and shares > held:
        raise InsufficientShares(
            f"You hold {_shares(held)} of “{term.phrase}” and cannot sell {shares:,}. "
            + (f"Sell at most {held:,}." if held else "Buy some first.")
        )
    q = _price_trade(side=side, shares=shares, supply=term.supply, p0=term.p0, k=term.k)
    if side == Trade.Side.BUY:
        if q.total > cash:
            affordable = curve.shares_for_total(
                term.supply,
                cash,
                p0=term.p0,
                k=term.k,
                basis_points=settings.MARKET_FEE_BASIS_POINTS,
            )
            raise InsufficientCash(
                f"Buying {_shares(shares)} of “{term.phrase}” costs {format_credits(q.total)} "
                f"with the fee, but you have {format_credits(cash)}. "
                + (f"You can afford {affordable:,}." if affordable else "Sell something first.")
            )
        if limit is not None and q.total > limit:
            raise Slippage(
                f"The price moved: {_shares(shares)} of “{term.phrase}” now cost "
                f"{format_credits(q.total)} with the fee, above your limit of "
                f"{format_credits(limit)}. Check the new quote and try again."
            )
    elif limit is not None and q.total < limit:
        raise Slippage(
            f"The price moved: selling {_shares(shares)} of “{term.phrase}” now returns "
            f"{format_credits(q.total)} after the fee, below your minimum of "
            f"{format_credits(limit)}. Check the new quote and try again."
        )
    return q


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
_BIGINT_MAX = 2**63 - 1


def _place(*, user, term: Term, side: str, shares: int, limit: int | None, key: str) -> Trade:
    """Trade through ``market_place_trade`` (market/migrations/0005), which locks, checks and
    writes in one statement. Outside a transaction that statement is the whole transaction, so
    a trade costs a single round trip; the function decides and this explains its refusals."""
    # No amount in a bigint column exceeds _BIGINT_MAX, so the clamped limit allows and refuses
    # the same trades as the trader's own.
    sql_limit = None if limit is None else min(limit, _BIGINT_MAX)
    shard = _fee_shard(term.pk)
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
        row = _atomic_with_retries(lambda: _fetchone(_PLACE_TRADE_SQL, params), statement=True)
        result, trade_id, transaction_id, traded_at, account_id, cash, held, *term_row = row
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
        raise TermNotTradable("That term does not exist (any more); pick one from the market.")
    if result == "repeat":
        return Trade.objects.select_related("term").get(pk=trade_id)
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
    q = _priced_or_refused(term=locked, side=side, shares=shares, limit=limit, cash=cash, held=held)
    if result != "traded":
        raise AssertionError(f"market_place_trade refused a trade market.trading allows: {row}")
    return _traded(
        term=locked,
        account_id=account_id,
        key=key,
        q=q,
        pk=trade_id,
        transaction_id=transaction_id,
        at=traded_at,
    )


def _fetchone(sql: str, params: Sequence[object]) -> tuple:
    """Run a fixed statement of the trade path as a prepared statement.

    Django's cursors bind parameters on the client, so Postgres would parse and plan the call
    afresh each time; a server-side-binding psycopg cursor on Django's own connection (same
    transaction, if any) lets Postgres keep the plan. Errors are wrapped as Django wraps them.
    """
    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        return cursor.fetchone()


# Dividends --------------------------------------------------------------------------------


def pay_dividend(
    *,
    term: Term,
    paper_ids: Sequence[int],
    per_share: int,
    date: dt.date,
    category: object = None,
) -> DividendPayout:
    """Pay ``per_share`` µ¢ per share to every holder of ``term`` for each paper in
    ``paper_ids`` not paid before, minted from issuance. Idempotent per term and paper.

    The term row is locked for the whole payout, so no trade can change the holdings between
    counting the shares and paying them.
    """
    if type(per_share) is not int or per_share < 0:
        raise InvalidQuantity("The dividend per share must be a whole, non-negative number of µ¢.")

    def work() -> DividendPayout:
        locked = Term.objects.select_for_update().get(pk=term.pk)
        if locked.status != Term.Status.LISTED:
            return DividendPayout(term_id=locked.pk, papers=0, shares=0, amount=0)
        # Under the term lock no other payout for this term can be between check and insert.
        paid = set(
            DividendEvent.objects.filter(term=locked, paper_id__in=paper_ids).values_list(
                "paper_id", flat=True
            )
        )
        new_papers = sorted(set(paper_ids) - paid)
        if not new_papers:
            return DividendPayout(term_id=locked.pk, papers=0, shares=0, amount=0)
        holders = list(
            Holding.objects.filter(term=locked, shares__gt=0)
            .order_by("account_id")
            .values_list("account_id", "shares")
        )
        outstanding = sum(shares for _, shares in holders)
        per_share_total = per_share * len(new_papers)
        amount = outstanding * per_share_total
        txn = None
        if amount:
            holder_ids = [account_id for account_id, _ in holders]
            # Lock holders in id order: two payouts for different terms then queue on the
            # same accounts in the same order instead of deadlocking.
            list(
                Account.objects.select_for_update()
                .filter(pk__in=holder_ids)
                .order_by("pk")
                .values_list("pk", flat=True)
            )
            txn = LedgerTransaction.objects.create(
                kind=LedgerTransaction.Kind.DIVIDEND,
                memo=f"Dividend on “{locked.phrase}”: {len(new_papers)} mentioning "
                f"paper(s) announced {date.isoformat()}, {per_share:,} µ¢ per share each",
            )
            issuance = Account.objects.system(Account.Kind.ISSUANCE)
            Entry.objects.bulk_create(
                [
                    Entry(
                        transaction=txn,
                        account_id=account_id,
                        asset=Entry.Asset.CASH,
                        amount=shares * per_share_total,
                    )
                    for account_id, shares in holders
                ]
                + [
                    Entry(
                        transaction=txn,
                        account_id=issuance.pk,
                        asset=Entry.Asset.CASH,
                        amount=-amount,
                    )
                ]
            )
            Account.objects.filter(pk__in=holder_ids).update(
                cash=F("cash")
                + Subquery(
                    Holding.objects.filter(account=OuterRef("pk"), term=locked).values("shares")[:1]
                )
                * per_share_total
            )
            Account.objects.filter(pk=issuance.pk).update(cash=F("cash") - amount)
        DividendEvent.objects.bulk_create(
            [
                DividendEvent(
                    term=locked,
                    paper_id=paper_id,
                    category=category,
                    date=date,
                    per_share=per_share,
                    shares=outstanding,
                    transaction=txn,
                )
                for paper_id in new_papers
            ]
        )
        return DividendPayout(
            term_id=locked.pk, papers=len(new_papers), shares=outstanding, amount=amount
        )

    return _atomic_with_retries(work)


def pay_dividends_for_terms(
    *,
    paper_ids_by_term: Mapping[int, Sequence[int]],
    per_share: int,
    date: dt.date,
    category: object = None,
) -> list[DividendPayout]:
    """``pay_dividend`` for many terms at once, with a number of queries that does not grow
    with the number of terms nobody holds. Returns one payout per term, in term id order.

    Most mentioned terms have no holders: for those the only thing to do is to record, once,
    that the paper's dividend went to nobody. That happens for all of them in ONE transaction:
    their term rows are locked together, in id order (the order every payout locks terms in,
    so two batches cannot deadlock, and trades lock a single term), which keeps a trade from
    buying in between the check for holders and the record. The terms that do have holders are
    then paid one transaction each through ``pay_dividend``, which locks and checks again, so a
    term's lock is held only as long as its own payout.
    """
    if type(per_share) is not int or per_share < 0:
        raise InvalidQuantity("The dividend per share must be a whole, non-negative number of µ¢.")
    wanted = {term_id: sorted(set(ids)) for term_id, ids in paper_ids_by_term.items() if ids}

    def work() -> tuple[dict[int, DividendPayout], list[Term]]:
        locked = list(Term.objects.select_for_update().filter(pk__in=wanted).order_by("pk"))
        payouts = {
            term.pk: DividendPayout(term_id=term.pk, papers=0, shares=0, amount=0)
            for term in locked
        }
        listed = [term for term in locked if term.status == Term.Status.LISTED]
        if not listed:
            return payouts, []
        # Under the term locks no other payout for these terms can be between check and insert.
        paid: set[tuple[int, int]] = set(
            DividendEvent.objects.filter(
                term__in=listed,
                paper_id__in={paper_id for term in listed for paper_id in wanted[term.pk]},
            ).values_list("term_id", "paper_id")
        )
        held = set(
            Holding.objects.filter(term__in=listed, shares__gt=0)
            .order_by()  # no default ordering: it would join accounts and terms into DISTINCT
            .values_list("term_id", flat=True)
            .distinct()
        )
        unpaid: list[tuple[int, int]] = []  # (term id, paper id)
        for term in listed:
            if term.pk in held:
                continue
            new_papers = [p for p in wanted[term.pk] if (term.pk, p) not in paid]
            payouts[term.pk] = DividendPayout(
                term_id=term.pk, papers=len(new_papers), shares=0, amount=0
            )
            unpaid += [(term.pk, paper_id) for paper_id in new_papers]
        _record_unheld_dividends(unpaid, per_share=per_share, date=date, category=category)
        return payouts, [term for term in listed if term.pk in held]

    payouts, held_terms = _atomic_with_retries(work)
    for term in held_terms:
        payouts[term.pk] = pay_dividend(
            term=term,
            paper_ids=wanted[term.pk],
            per_share=per_share,
            date=date,
            category=category,
        )
    return [payouts[term_id] for term_id in sorted(payouts)]


def _record_unheld_dividends(
    pairs: Sequence[tuple[int, int]], *, per_share: int, date: dt.date, category: object
) -> None:
    """Record (term id, paper id) dividends that nobody held shares for: no money moves.

    One INSERT … SELECT FROM unnest() of two integer arrays: a busy day has ten thousand of
    these rows, and building and quoting as many model instances (a timestamp each) would cost
    more than the insert itself.
    """
    if not pairs:
        return
    category_id = getattr(category, "pk", None)
    now = timezone.now()
    meta = DividendEvent._meta
    columns = ", ".join(
        connection.ops.quote_name(meta.get_field(name).column)
        for name in (
            "term",
            "paper",
            "category",
            "date",
            "per_share",
            "shares",
            "transaction",
            "created_at",
        )
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {connection.ops.quote_name(meta.db_table)} ({columns}) "
            "SELECT term_id, paper_id, %s, %s, %s, 0, NULL, %s "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS pairs(term_id, paper_id)",
            [
                category_id,
                date,
                per_share,
                now,
                [term_id for term_id, _ in pairs],
                [paper_id for _, paper_id in pairs],
            ],
        )
