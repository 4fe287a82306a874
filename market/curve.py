"""The bonding curve every term trades on, in integer micro-credits (µ¢).

Share number ``n + 1`` costs ``p0 + k·n`` µ¢, so with ``n`` shares outstanding:

- ``price(n)`` is the price of the next share;
- ``cost(n, d)`` is what buying ``d`` more shares costs: ``p0·d + k·d·(2n + d − 1)/2``
  (``d·(2n + d − 1)`` is always even, so the result is an exact integer);
- ``proceeds(n, d)`` is what selling ``d`` shares back returns: ``cost(n − d, d)``;
- a term's reserve is always ``cost(0, supply)``, enough to buy every share back.

The Python functions are pure functions of integers: no floats, no Decimal, no database;
they refuse non-integers (and bools) so a float can never leak into the ledger. Beside each one
used in a query sits its ORM expression (``*_sql``), so the database can compute the same
figure over many rows; tests/market/test_stats.py holds the two to the same results, and
tests/market/test_place_trade.py holds the SQL functions (market/sql/place_trade.sql) to them.

Bounds. Every figure is stored in a 64-bit column, so the admin accepts only curves on which
no reachable state overflows: ``MAX_SUPPLY`` shares, and a reserve of ``cost(0, MAX_SUPPLY)``
(plus a trade's fee) that still fits (see ``curve_fits``).
"""

from __future__ import annotations

from math import isqrt

from django.db.models import BigIntegerField, ExpressionWrapper, F, Value

BASIS_POINTS = 10_000


def _require_int(name: str, value: object, *, minimum: int = 0) -> int:
    if type(value) is not int:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum}, got {value}")
    return value


def _require_params(p0: int, k: int) -> None:
    _require_int("p0", p0, minimum=1)
    _require_int("k", k)


def price(n: int, *, p0: int, k: int) -> int:
    """The price in µ¢ of the next share when ``n`` shares exist (share number ``n + 1``)."""
    _require_params(p0, k)
    _require_int("n", n)
    return p0 + k * n


def cost(n: int, d: int, *, p0: int, k: int) -> int:
    """What buying ``d`` shares costs, in µ¢, when ``n`` shares exist (fee excluded)."""
    _require_params(p0, k)
    _require_int("n", n)
    _require_int("d", d)
    return p0 * d + k * d * (2 * n + d - 1) // 2


def proceeds(n: int, d: int, *, p0: int, k: int) -> int:
    """What selling ``d`` shares returns, in µ¢, when ``n`` shares exist (fee excluded)."""
    _require_int("n", n)
    _require_int("d", d)
    if d > n:
        raise ValueError(f"cannot sell {d} shares when only {n} exist")
    return cost(n - d, d, p0=p0, k=k)


def reserve(supply: int, *, p0: int, k: int) -> int:
    """The reserve a term must hold with ``supply`` shares outstanding: ``cost(0, supply)``."""
    return cost(0, supply, p0=p0, k=k)


def shares_for_budget(n: int, budget: int, *, p0: int, k: int) -> int:
    """The largest whole ``d`` with ``cost(n, d) <= budget`` (fee excluded).

    ``cost(n, d) <= B`` is the quadratic ``k·d² + (2·p0 + k·(2n − 1))·d − 2B <= 0``. Its
    positive root, computed with the integer square root, lands on the answer or one off it;
    the correction loops make the result exact without any floating point.
    """
    _require_params(p0, k)
    _require_int("n", n)
    _require_int("budget", budget)
    if k == 0:
        return budget // p0
    b = 2 * p0 + k * (2 * n - 1)
    d = max((isqrt(b * b + 8 * k * budget) - b) // (2 * k), 0)
    while cost(n, d + 1, p0=p0, k=k) <= budget:
        d += 1
    while d > 0 and cost(n, d, p0=p0, k=k) > budget:
        d -= 1
    return d


def fee(amount: int, *, basis_points: int) -> int:
    """The trading fee on a curve amount: ``basis_points``/10,000 of it, rounded up to 1 µ¢."""
    _require_int("amount", amount)
    _require_int("basis_points", basis_points)
    return -(-amount * basis_points // BASIS_POINTS)


def amount_within(total: int, *, basis_points: int) -> int:
    """The largest curve amount ``a`` whose ``a + fee(a)`` fits in ``total``.

    ``a + ceil(a·bp/10⁴) = ceil(a·(10⁴ + bp)/10⁴) <= total`` exactly when
    ``a·(10⁴ + bp) <= total·10⁴``, so one integer division is exact.
    """
    _require_int("total", total)
    _require_int("basis_points", basis_points)
    return total * BASIS_POINTS // (BASIS_POINTS + basis_points)


def shares_for_total(n: int, total: int, *, p0: int, k: int, basis_points: int) -> int:
    """The most shares a buyer with ``total`` µ¢ can buy at supply ``n``, fee included."""
    return shares_for_budget(n, amount_within(total, basis_points=basis_points), p0=p0, k=k)


# Bounds ------------------------------------------------------------------------------------

BIGINT_MAX = 2**63 - 1
# The supply the bounds on p0 and k are derived for: ten million shares of one term, a thousand
# maximal trades, far beyond any market of play money. A supply past it cannot overflow either:
# its reserve would be more money than exists (the reserve is paid in cash, and every credit is
# minted by a bounded grant, adjustment or dividend), and one trade moves at most
# MARKET_MAX_SHARES_PER_TRADE shares, whose cost fits whenever p0 and k do.
MAX_SUPPLY = 10**7
# A fee is at most the whole amount (10,000 basis points), so amount + fee <= 2 · amount.
_FEE_HEADROOM = 2


def curve_fits(*, p0: int, k: int) -> bool:
    """Whether every reachable state of a term on this curve fits in 64 bits: the reserve of
    ``MAX_SUPPLY`` shares (the largest figure: every trade amount, price and reserve is at most
    that), with the fee on top."""
    if p0 < 1 or k < 0:
        return False
    return _FEE_HEADROOM * reserve(MAX_SUPPLY, p0=p0, k=k) <= BIGINT_MAX


def max_k(*, p0: int) -> int:
    """The largest ``k`` with ``curve_fits(p0=p0, k=k)``, or -1 when even ``k = 0`` does not."""
    room = BIGINT_MAX // _FEE_HEADROOM - p0 * MAX_SUPPLY
    if room < 0:
        return -1
    return room // (MAX_SUPPLY * (MAX_SUPPLY - 1) // 2)


MAX_P0 = BIGINT_MAX // _FEE_HEADROOM // MAX_SUPPLY


# The same curve as ORM expressions ---------------------------------------------------------

BIG_INTEGER: BigIntegerField = BigIntegerField()


def big(expression) -> ExpressionWrapper:
    """An integer expression typed as a 64-bit integer column."""
    return ExpressionWrapper(expression, output_field=BIG_INTEGER)


def price_sql(supply=None, *, p0: str = "p0", k: str = "k") -> ExpressionWrapper:
    """``price(supply)`` of the term whose curve is in fields ``p0`` and ``k``; the supply is
    the ``supply`` field unless an expression for it is given."""
    return big(F(p0) + F(k) * (F("supply") if supply is None else supply))


def proceeds_sql(*, n, d, p0, k) -> ExpressionWrapper:
    """``proceeds(n, d)`` = ``cost(n − d, d)`` = ``p0·d + k·d·(2n − d − 1)/2``, exact because
    ``d·(2n − d − 1)`` is even; every part is non-negative, so SQL's truncating division is the
    floor that ``cost`` uses."""
    return big(p0 * d + k * d * (Value(2) * n - d - Value(1)) / Value(2))


def fee_sql(amount, *, basis_points: int) -> ExpressionWrapper:
    """``fee(amount)``: ceil(amount · bp / 10⁴) for a non-negative amount."""
    return big((amount * Value(basis_points) + Value(BASIS_POINTS - 1)) / Value(BASIS_POINTS))
