"""Read-side figures for the market pages: prices then and now, holders, mentions, price series,
portfolios.

The leaderboards are ``market.leaderboards``.

Every function here only reads. Each one costs a fixed number of queries however many terms,
holdings or traders there are: figures over many rows are computed by the database (annotated
subqueries, aggregates and window functions), never by a query per row.

Prices in the past follow from the trades alone. Only trades move a term's supply, so the
supply at time T is the ``supply_after`` of the last trade at or before T, or zero when there
was none; the price then is the curve's price at that supply. (A term's p0 and k change only
while its supply is zero, and then the price shown for the past is the current p0.)

The curve in SQL comes from ``market.curve`` (its ``*_sql`` expressions), beside the Python.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.postgres.aggregates import ArrayAgg
from django.db.models import (
    Count,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Sum,
    Value,
    Window,
)
from django.db.models.functions import Abs, Coalesce, Lower
from django.urls import reverse
from django.utils import timezone

from papers.models import Listing
from peerrevenue import replicas
from peerrevenue.db import prepared_rows

from . import curve, public_names
from .cash import cash_of
from .models import (
    DividendEvent,
    Entry,
    Holding,
    LedgerTransaction,
    Mention,
    Term,
    Trade,
)
from .units import format_credits

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations

RECENT_ANNOUNCEMENT_DAYS = 7

# Money that was given rather than earned; the leaderboards subtract it from net worth.
GIVEN_KINDS = (LedgerTransaction.Kind.GRANT, LedgerTransaction.Kind.ADJUSTMENT)

_big = curve.big
_BIG = curve.BIG_INTEGER


# Prices -----------------------------------------------------------------------------------


def _price_at_sql(when: dt.datetime, *, term_ref: str = "pk"):
    """SQL for a term's price at ``when`` (see the module docstring)."""
    return curve.price_sql(_supply_at_sql(when, term_ref=term_ref))


def _supply_at_sql(when: dt.datetime, *, term_ref: str = "pk"):
    """SQL for a term's supply at ``when``: zero before its first trade."""
    supply_then = Subquery(
        Trade.objects.filter(term=OuterRef(term_ref), created_at__lte=when)
        # Newest first along the (term, created_at) index: one index probe per term.
        .order_by("-created_at", "-term_version")
        .values("supply_after")[:1],
        output_field=_BIG,
    )
    return Coalesce(supply_then, Value(0))


def supplies_at(*, terms: QuerySet[Term], when: dt.datetime) -> dict[int, int]:
    """Each of ``terms``' supply at ``when``: with the term's curve, what its price then
    follows from (``curve.price``)."""
    rows = terms.order_by().annotate(then=_supply_at_sql(when)).values_list("pk", "then")
    return dict(rows)


def pasts(*, terms: QuerySet[Term], now: dt.datetime) -> QuerySet:
    """Rows of (id, supply a day ago, supply a week ago, recent mentions) of ``terms``: the
    part of the market table's figures that trades made now cannot change."""
    return (
        terms.order_by()
        .annotate(
            supply_1d=_supply_at_sql(now - dt.timedelta(days=1)),
            supply_7d=_supply_at_sql(now - dt.timedelta(days=7)),
            recent=Coalesce(Subquery(_recent_mentions_sql(), output_field=_BIG), Value(0)),
        )
        .values_list("pk", "supply_1d", "supply_7d", "recent")
    )


def _recent_mentions_sql() -> QuerySet:
    """A term's mentions in visible papers of the last seven announcement days (a subquery
    on the outer term)."""
    return (
        Mention.objects.filter(
            term=OuterRef("pk"), date__in=recent_announcement_dates(), paper__hidden=False
        )
        .order_by()
        .values("term")
        .annotate(n=Count("pk"))
        .values("n")
    )


def change_bp(now: int, then: int) -> int:
    """The change from ``then`` to ``now`` in basis points, truncated toward zero, as
    ``_change_bp_sql`` computes it (a price is never below p0 >= 1: no division by zero)."""
    moved = abs(now - then) * 10_000 // then
    return moved if now >= then else -moved


def _change_bp_sql(now_field: str, then_field: str):
    # Basis points, truncated toward zero; a price is never below p0 >= 1, so no division by 0.
    return _big((F(now_field) - F(then_field)) * Value(10_000) / F(then_field))


# What the querysets below annotate their rows with (µ¢, basis points, counts), for mypy.
class DayChange(TypedDict):
    price_now: int
    price_1d: int
    change_1d_bp: int


class MarketFigures(DayChange):
    phrase_lower: str
    price_7d: int
    change_7d_bp: int
    holder_count: int
    recent_mentions: int
    traded_7d: int
    move_1d_bp: int
    move_7d_bp: int


class HistoryFigures(TypedDict):
    balance_after: int
    dividend_phrase: str | None
    dividend_slug: str | None
    dividend_papers: int | None


def day_changes(
    *, terms: QuerySet[Term], now: dt.datetime
) -> QuerySet[WithAnnotations[Term, DayChange]]:
    """``terms`` annotated with ``price_now`` and ``change_1d_bp`` (see ``market_terms``)."""
    return terms.annotate(
        price_now=curve.price_sql(),
        price_1d=_price_at_sql(now - dt.timedelta(days=1)),
        change_1d_bp=_change_bp_sql("price_now", "price_1d"),
    )


def recent_announcement_dates(*, days: int = RECENT_ANNOUNCEMENT_DAYS) -> QuerySet:
    """The last ``days`` dates on which any category announced papers (a subquery)."""
    return Listing.objects.order_by("-date").values("date").distinct()[:days]


# Sort keys of the market table: URL value → annotation. Descending is "-" in the URL.
MARKET_SORTS = {
    "phrase": "phrase_lower",
    "price": "price_now",
    "change": "change_1d_bp",
    "change7": "change_7d_bp",
    "supply": "supply",
    "holders": "holder_count",
    "mentions": "recent_mentions",
    "traded": "traded_7d",
    "movers": "move_7d_bp",
}
# Views of the market that rank by several columns, most interesting first. "moving" is the
# default: in a young market every price reads 1.00 and 0.0%, so what papers mention leads.
MARKET_VIEWS = {
    "moving": ("recent_mentions", "move_1d_bp", "traded_7d"),
    "movers": ("move_7d_bp", "move_1d_bp", "recent_mentions"),
    "traded": ("traded_7d", "recent_mentions"),
}


def market_terms(
    *, search: str = "", sort: str = "moving", descending: bool = False, now: dt.datetime
) -> QuerySet[WithAnnotations[Term, MarketFigures]]:
    """Terms on the market (listed and halted), each annotated with ``price_now``,
    ``price_1d``/``price_7d`` (the prices a day and a week before ``now``),
    ``change_1d_bp``/``change_7d_bp`` (change in basis points), ``holder_count`` and
    ``recent_mentions`` (visible papers in the last seven announcement days), ``traded_7d``
    (shares bought or sold in the last seven days) and ``move_1d_bp``/``move_7d_bp`` (the size
    of the change either way).

    ``sort`` is a column of ``MARKET_SORTS`` or, always from the top down, a view of
    ``MARKET_VIEWS``.

    ``search`` matches the phrase or an alias, case-insensitively, anywhere in it.
    """
    holders = (
        Holding.objects.filter(term=OuterRef("pk"), shares__gt=0)
        .order_by()
        .values("term")
        .annotate(n=Count("pk"))
        .values("n")
    )
    mentions = _recent_mentions_sql()
    traded = (
        Trade.objects.filter(term=OuterRef("pk"), created_at__gte=now - dt.timedelta(days=7))
        .order_by()
        .values("term")
        .annotate(n=Sum("shares"))
        .values("n")
    )
    terms = Term.objects.exclude(status=Term.Status.DELISTED)
    if search:
        terms = terms.filter(Q(phrase__icontains=search) | Q(aliases__icontains=search))
    priced = (
        day_changes(terms=terms, now=now)
        .annotate(
            phrase_lower=Lower("phrase"),
            price_7d=_price_at_sql(now - dt.timedelta(days=7)),
            change_7d_bp=_change_bp_sql("price_now", "price_7d"),
            holder_count=Coalesce(Subquery(holders, output_field=_BIG), Value(0)),
            recent_mentions=Coalesce(Subquery(mentions, output_field=_BIG), Value(0)),
            traded_7d=Coalesce(Subquery(traded, output_field=_BIG), Value(0)),
        )
        .annotate(move_1d_bp=Abs("change_1d_bp"), move_7d_bp=Abs("change_7d_bp"))
    )
    if sort in MARKET_VIEWS:
        order = [F(column).desc(nulls_last=True) for column in MARKET_VIEWS[sort]]
    else:
        column = MARKET_SORTS.get(sort, "phrase_lower")
        order = [F(column).desc() if descending else F(column).asc()]
    return priced.order_by(*order, "phrase_lower", "pk")


@dataclass(frozen=True, slots=True)
class DividendDay:
    date: dt.date
    papers: int
    per_share: int  # µ¢ per share per paper
    amount: int  # µ¢ paid out that day to all holders
    arxiv_ids: tuple[str, ...] = ()  # the papers that paid, for their "why this counted"

    @property
    def per_share_total(self) -> int:
        return self.per_share * self.papers


def dividend_days(*, term: Term) -> list[DividendDay]:
    """The term's dividends grouped by announcement date, oldest first."""
    rows = (
        DividendEvent.objects.filter(term=term)
        .order_by("date")
        .values("date")
        .annotate(
            n_papers=Count("pk"),
            rate=Max("per_share"),
            paid=Sum(_big(F("per_share") * F("shares"))),
            ids=ArrayAgg("paper__arxiv_id", order_by="paper__arxiv_id"),
        )
        .values_list("date", "n_papers", "rate", "paid", "ids")
    )
    return [
        DividendDay(date=date, papers=papers, per_share=rate, amount=paid, arxiv_ids=tuple(ids))
        for date, papers, rate, paid, ids in rows
    ]


# Term page lists --------------------------------------------------------------------------


def _mentions(*, term: Term, since_listing: bool):
    # A mention pays only when its listing day was announced at or after the term's listing;
    # the older ones are shown apart, as what the word did before it traded.
    cutoff = Q(date__gte=term.first_paying_date)
    return Mention.objects.filter(cutoff if since_listing else ~cutoff, term=term).filter(
        paper__hidden=False
    )


def recent_mentions(*, term: Term, limit: int = 10, since_listing: bool = True) -> list[Mention]:
    """The newest visible mentions since the term was listed (or, ``since_listing=False``,
    from before it was)."""
    return list(
        _mentions(term=term, since_listing=since_listing)
        .select_related("paper")
        .order_by("-date", "-paper__arxiv_id")[:limit]
    )


def mention_counts(*, term: Term) -> tuple[int, int]:
    """Visible mentions (since the term was listed, before it was), in one query."""
    cutoff = Q(date__gte=term.first_paying_date)
    counts = Mention.objects.filter(term=term, paper__hidden=False).aggregate(
        since=Count("pk", filter=cutoff), before=Count("pk", filter=~cutoff)
    )
    return counts["since"], counts["before"]


# A term page's tables after each trade of the term: their lines carry their text, formatted
# here in plain Python, since the template filters (intcomma, date) cost more than the query.


@dataclass(frozen=True, slots=True)
class HolderLine:
    """A term page's top holder: ``username`` is None for a trader whose page is private,
    who is then ``name``d as anyone and linked nowhere (market.public_names)."""

    user_id: int
    username: str | None
    demo: bool
    shares: int
    name: str = field(init=False)
    url: str = field(init=False)
    shares_text: str = field(init=False)

    def __post_init__(self) -> None:
        named = self.username is not None
        object.__setattr__(self, "name", self.username if named else public_names.HIDDEN_NAME)
        object.__setattr__(self, "url", reverse("trader", args=[self.username]) if named else "")
        object.__setattr__(self, "shares_text", f"{self.shares:,}")


@dataclass(frozen=True, slots=True)
class TradeLine:
    """A term page's recent trade (``username`` as for HolderLine)."""

    created_at: dt.datetime
    username: str | None
    demo: bool
    side: str
    shares: int
    price_after: int
    when_iso: str = field(init=False)
    when_text: str = field(init=False)  # "2 Dec 07:43", in the site's time zone
    side_label: str = field(init=False)
    shares_text: str = field(init=False)
    price_text: str = field(init=False)

    @property
    def name(self) -> str:
        return public_names.HIDDEN_NAME if self.username is None else self.username

    def __post_init__(self) -> None:
        local = timezone.localtime(self.created_at)
        object.__setattr__(self, "when_iso", local.isoformat())
        object.__setattr__(self, "when_text", f"{local.day} {local:%b %H:%M}")
        object.__setattr__(self, "side_label", Trade.Side(self.side).label)
        object.__setattr__(self, "shares_text", f"{self.shares:,}")
        object.__setattr__(self, "price_text", format_credits(self.price_after, unit=False))


# The term, its top holders and its latest trades in one statement: it runs after every trade
# of the term (the kept piece that shows them moves with its stamp). Prepared, and raw: the ORM
# binds on the client, and planning the aggregates costs about as much as running them.
_TERM_ROWS_SQL = """
SELECT {columns},
  (SELECT coalesce(json_agg(json_build_array(a.user_id, {shown}, a.demo, h.shares)
                            ORDER BY h.shares DESC, h.account_id), '[]')
     FROM (SELECT account_id, shares FROM market_holding
            WHERE term_id = t.id AND shares > 0
            ORDER BY shares DESC, account_id LIMIT %(holders)s) AS h
     JOIN market_account AS a ON a.id = h.account_id
     JOIN {users} AS u ON u.id = a.user_id),
  (SELECT coalesce(json_agg(json_build_array(r.created_at, {shown}, a.demo, r.side,
                                             r.shares, r.price_after)
                            ORDER BY r.term_version DESC), '[]')
     FROM (SELECT account_id, created_at, side, shares, price_after, term_version
             FROM market_trade WHERE term_id = t.id
            ORDER BY term_version DESC LIMIT %(trades)s) AS r
     JOIN market_account AS a ON a.id = r.account_id
     JOIN {users} AS u ON u.id = a.user_id)
FROM market_term AS t WHERE t.slug = %(slug)s
"""


@functools.cache
def _term_rows_sql() -> str:
    model = get_user_model()
    username = model._meta.get_field(model.USERNAME_FIELD).column  # type: ignore[union-attr]
    columns = ", ".join(f't."{field.column}"' for field in Term._meta.concrete_fields)
    # A private trader's name never leaves the database for a public page.
    shown = f"CASE WHEN a.user_id IN ({public_names.private_sql()}) THEN NULL ELSE u.{username} END"
    return _TERM_ROWS_SQL.format(columns=columns, users=model._meta.db_table, shown=shown)


@dataclass(frozen=True, slots=True)
class TermRows:
    """What a term page shows that a trade of the term changes."""

    term: Term
    holders: list[HolderLine]  # most shares first
    trades: list[TradeLine]  # newest first


def term_page_rows(*, slug: str, holders: int = 10, trades: int = 15) -> TermRows | None:
    """The term, its top ``holders`` and its latest ``trades``, in one round trip; None if
    there is no such term."""
    using = replicas.reading_connection()
    rows = prepared_rows(
        _term_rows_sql(), {"slug": slug, "holders": holders, "trades": trades}, using=using
    )
    if not rows:
        return None
    fields = Term._meta.concrete_fields
    *values, held, traded = rows[0]
    # As the ORM would load them: the connection reads jsonb as text, for the field to parse.
    values = [
        field.from_db_value(value, None, using) if hasattr(field, "from_db_value") else value
        for field, value in zip(fields, values, strict=True)
    ]
    term = Term.from_db(using.alias, [field.attname for field in fields], values)
    held, traded = (json.loads(v) if isinstance(v, str) else v for v in (held, traded))
    return TermRows(
        term,
        [HolderLine(*row) for row in held],
        [
            TradeLine(dt.datetime.fromisoformat(at), name, demo, side, shares, price)
            for at, name, demo, side, shares, price in traded
        ],
    )


# Portfolio --------------------------------------------------------------------------------


def sell_back_value(*, supply: int, shares: int, p0: int, k: int) -> int:
    """What selling ``shares`` now would bring in, after the fee (µ¢)."""
    amount = curve.proceeds(supply, shares, p0=p0, k=k)
    return amount - curve.fee(amount, basis_points=settings.MARKET_FEE_BASIS_POINTS)


def average_cost_basis(trades: Iterable[tuple[int, str, int, int]]) -> dict[int, int]:
    """Cost basis (µ¢) of the shares still held, per term, by the average-cost method.

    ``trades`` are (term id, side, shares, total with fee) in the order they happened. A buy
    adds what it cost; a sale removes its share of the basis (rounded down), whatever it fetched;
    selling out resets the basis to zero.
    """
    held: dict[int, int] = defaultdict(int)
    basis: dict[int, int] = defaultdict(int)
    for term_id, side, shares, total in trades:
        if side == Trade.Side.BUY:
            held[term_id] += shares
            basis[term_id] += total
        else:
            before = held[term_id]
            held[term_id] = before - shares
            basis[term_id] = 0 if held[term_id] <= 0 else basis[term_id] * held[term_id] // before
    return {term_id: value for term_id, value in basis.items() if held[term_id] > 0}


@dataclass(frozen=True, slots=True)
class Position:
    term: Term
    shares: int
    sell_back: int  # proceeds of selling them all now, after the fee
    cost_basis: int
    dividends: int  # received on this term, ever

    @property
    def profit(self) -> int:
        """Gain if sold now: sell-back value minus cost basis (dividends not included)."""
        return self.sell_back - self.cost_basis


@dataclass(frozen=True, slots=True)
class Portfolio:
    cash: int
    granted: int  # starting grant and adjustments
    dividends: int  # received on all terms, ever
    positions: list[Position] = field(default_factory=list)

    @property
    def holdings_value(self) -> int:
        return sum(position.sell_back for position in self.positions)

    @property
    def net_worth(self) -> int:
        return self.cash + self.holdings_value

    @property
    def gain(self) -> int:
        """Net worth minus what was given: the leaderboard's score."""
        return self.net_worth - self.granted


def _dividend_term_sql(field_name: str = "term_id", transaction_ref: str = "transaction_id"):
    # A dividend transaction belongs to one term (one payout); its events name it.
    return Subquery(
        DividendEvent.objects.filter(transaction_id=OuterRef(transaction_ref)).values(field_name)[
            :1
        ]
    )


def portfolio(*, user, cash: int | None = None) -> Portfolio:
    """The user's cash (unless given), positions and totals, in a fixed handful of queries."""
    if cash is None:
        cash = cash_of(user) or 0
    holdings = list(
        Holding.objects.filter(account__user=user, shares__gt=0)
        .select_related("term")
        .order_by(Lower("term__phrase"))
    )
    trades = (
        Trade.objects.filter(account__user=user)
        .order_by("id")
        .values_list("term_id", "side", "shares", "amount", "fee")
    )
    basis = average_cost_basis(
        (term_id, side, shares, amount + fee if side == Trade.Side.BUY else amount - fee)
        for term_id, side, shares, amount, fee in trades
    )
    cash_entries = Entry.objects.filter(account__user=user, asset=Entry.Asset.CASH)
    dividends_by_term = dict(
        cash_entries.filter(transaction__kind=LedgerTransaction.Kind.DIVIDEND)
        .annotate(dividend_term=_dividend_term_sql())
        .order_by()
        .values("dividend_term")
        .annotate(total=Sum("amount"))
        .values_list("dividend_term", "total")
    )
    granted = (
        cash_entries.filter(transaction__kind__in=GIVEN_KINDS).aggregate(total=Sum("amount"))[
            "total"
        ]
        or 0
    )
    positions = [
        Position(
            term=h.term,
            shares=h.shares,
            sell_back=sell_back_value(
                supply=h.term.supply, shares=h.shares, p0=h.term.p0, k=h.term.k
            ),
            cost_basis=basis.get(h.term_id, 0),
            dividends=dividends_by_term.get(h.term_id, 0),
        )
        for h in holdings
    ]
    return Portfolio(
        cash=cash,
        granted=granted,
        dividends=sum(dividends_by_term.values()),
        positions=positions,
    )


def account_history(*, user) -> QuerySet[WithAnnotations[Entry, HistoryFigures]]:
    """Every movement of the user's cash, newest first: grants, trades, dividends, adjustments.

    Each entry carries ``balance_after`` (the running balance), its ``transaction`` and, for a
    trade, ``transaction.trade`` with its term; a dividend carries ``dividend_phrase``,
    ``dividend_slug`` and ``dividend_papers``.
    """
    papers = (
        DividendEvent.objects.filter(transaction_id=OuterRef("transaction_id"))
        .order_by()
        .values("transaction_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return (
        Entry.objects.filter(account__user=user, asset=Entry.Asset.CASH)
        .select_related("transaction", "transaction__trade", "transaction__trade__term")
        .annotate(
            balance_after=Window(Sum("amount"), order_by=F("id").asc()),
            dividend_phrase=_dividend_term_sql("term__phrase"),
            dividend_slug=_dividend_term_sql("term__slug"),
            dividend_papers=Subquery(papers, output_field=_BIG),
        )
        .order_by("-id")
    )
