"""Cash accounts: opening one with its starting grant, minting from the issuance account, and
the admin's balance adjustments.

Money enters the market only here (grants and adjustments) and in ``market.dividends``, always
as a balanced ledger transaction against the issuance account. Locks: an adjustment locks the
account, then issuance (updated last, so its lock is held only until commit), the order every
market write uses.
"""

from __future__ import annotations

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connection, connections, router
from django.db.models import F

from peerrevenue import replicas
from peerrevenue.db import atomic_with_retries, prepared_row

from .models import Account, Entry, Holding, LedgerTransaction, Term
from .refusals import InsufficientCash, InvalidQuantity, InvalidRequest
from .units import MICRO_PER_CREDIT, format_credits

# Bounds that keep every balance far inside its 64-bit column (about 9.2 · 10¹⁸ µ¢), whatever
# trades and dividends add to it: one adjustment moves at most a billion credits, and no
# adjustment takes an account past a hundred billion.
MAX_ADJUSTMENT = 10**9 * MICRO_PER_CREDIT
MAX_ADJUSTED_BALANCE = 10**11 * MICRO_PER_CREDIT


def mint(
    *, account_id: int, amount: int, kind: str, memo: str, by: object = None
) -> LedgerTransaction:
    """Move ``amount`` µ¢ from issuance to an account (negative: back to issuance).

    The caller holds the account's row lock (or has just created the row) and updates the
    account's cached cash itself; issuance is updated last so its lock is held only until
    commit.
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
            mint(
                account_id=account.pk,
                amount=grant,
                kind=LedgerTransaction.Kind.GRANT,
                memo=f"Starting grant for {user}",
            )
        return account

    try:
        return atomic_with_retries(work)
    except IntegrityError:
        # Two first requests of a new user raced and the other one created the account.
        account = Account.objects.filter(user=user).first()
        if account is None:
            raise
        return account


def cash_of(user) -> int | None:
    """The user's cash in µ¢, or None before they have an account. Only reads."""
    return Account.objects.filter(user=user).values_list("cash", flat=True).first()


def balance(user) -> int:
    """The user's cash in µ¢ (opening their account, with its grant, if they have none)."""
    cash = cash_of(user)
    return open_account(user=user).cash if cash is None else cash


# Casts pin the argument types, so the plan the server prepares is reused whatever the values.
_HOLDING_SQL = (
    f"SELECT h.shares FROM {Holding._meta.db_table} h"  # noqa: S608 - table names only
    f" JOIN {Account._meta.db_table} a ON a.id = h.account_id"
    " WHERE a.user_id = %s::integer AND h.term_id = %s::bigint"
)


def holding(user, term: Term) -> int:
    """How many shares of ``term`` the user holds.

    The trade box asks before every sale, so by a fixed, prepared statement: through the ORM,
    building the query took longer than running it. Read from where the ORM would read it."""
    using = connections[router.db_for_read(Holding) or DEFAULT_DB_ALIAS]
    row = prepared_row(_HOLDING_SQL, (user.pk, term.pk), using=using)
    return row[0] if row is not None else 0


def cash_and_holding(user, term_id: int) -> tuple[int, int]:
    """(``balance(user)``, shares of the term held) in one query: a term page's trade box.

    Every signed-in view of a term page asks, so by a fixed statement: through the ORM,
    building the query with its subquery took longer than running it."""
    accounts = connection.ops.quote_name(Account._meta.db_table)
    holdings = connection.ops.quote_name(Holding._meta.db_table)
    # From where the page reads (peerrevenue.replicas): a trader who just traded reads the
    # primary until a replica has the trade.
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(
            f"SELECT a.cash, (SELECT h.shares FROM {holdings} h"  # noqa: S608 - table names only
            f" WHERE h.account_id = a.id AND h.term_id = %s) FROM {accounts} a"
            " WHERE a.user_id = %s",
            [term_id, user.pk],
        )
        found = cursor.fetchone()
    if found is None:  # a user from before the market: open the account, holding nothing
        return balance(user), 0
    return found[0], found[1] or 0


def check_adjustment(amount: object) -> int:
    """``amount`` (µ¢) if it is a possible adjustment, else InvalidQuantity saying why."""
    if type(amount) is not int or amount == 0:
        raise InvalidQuantity("Enter a non-zero amount of credits to add or remove.")
    if abs(amount) > MAX_ADJUSTMENT:
        raise InvalidQuantity(
            f"One adjustment moves at most {format_credits(MAX_ADJUSTMENT)}; "
            f"{format_credits(abs(amount))} is more than the market can hold."
        )
    return amount


def adjust_balance(
    *, account: Account, amount: int, reason: str, by: object = None
) -> LedgerTransaction:
    """Credit (or, negative, debit) a user's cash from/to issuance, with a recorded reason."""
    check_adjustment(amount)
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
        if cash + amount > MAX_ADJUSTED_BALANCE:
            raise InvalidQuantity(
                f"{account} has {format_credits(cash)}; an adjustment may not take a balance "
                f"past {format_credits(MAX_ADJUSTED_BALANCE)}."
            )
        Account.objects.filter(pk=account.pk).update(cash=F("cash") + amount)
        return mint(
            account_id=account.pk,
            amount=amount,
            kind=LedgerTransaction.Kind.ADJUSTMENT,
            memo=reason,
            by=by,
        )

    return atomic_with_retries(work)
