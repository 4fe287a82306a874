"""Limit orders and their fills: the rows. What places, fills and cancels them is
``market.orders``; ``manage.py check_ledger`` proves them (market/ledger.py, invariant 12).

An order waits on one term's curve: a buy for up to ``shares`` shares paying at most
``limit_price`` µ¢ for any single share, a sell for up to ``shares`` receiving at least
``limit_price`` for any single share (the fee on top, as for every trade). Each fill is an
ordinary trade through ``market.trading``'s one trade path, whose key is derived from the order
and the fill's number (``fill_key``), so a fill retried after a lost connection trades once.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import models
from django.db.models import F, Q, Sum

from ..sides import Side


def fill_key(order_id: int, number: int) -> str:
    """The trade key of an order's ``number``-th fill. The colons keep it apart from every key a
    trader's form can send (letters, digits, ``-`` and ``_`` only)."""
    return f"order:{order_id}:fill:{number}"


class Order(models.Model):
    class State(models.TextChoices):
        OPEN = "open", "Waiting"
        FILLED = "filled", "Filled"
        CANCELLED = "cancelled", "Cancelled"
        EXPIRED = "expired", "Expired"

    account = models.ForeignKey(
        "market.Account", on_delete=models.PROTECT, related_name="orders", db_index=False
    )
    term = models.ForeignKey(
        "market.Term", on_delete=models.PROTECT, related_name="orders", db_index=False
    )
    key = models.CharField(max_length=100, help_text="The client's idempotency key.")
    side = models.CharField(max_length=4, choices=Side.choices)
    shares = models.BigIntegerField(help_text="The most shares to buy or sell.")
    limit_price = models.BigIntegerField(
        "limit (µ¢ a share)",
        help_text="Buy: the most paid for any single share; sell: the least received.",
    )
    filled = models.BigIntegerField(default=0, help_text="Shares traded so far.")
    fills = models.IntegerField(default=0, help_text="Fills so far; the next one's number - 1.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.OPEN)
    reason = models.TextField(blank=True, help_text="Why it was cancelled or expired.")
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by the database's clock when it closes (market.orders, the status trigger of
    # migration 0009): after the lock that orders it behind every fill.
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "key"], name="unique_order_key_per_account"),
            models.CheckConstraint(condition=Q(shares__gt=0), name="order_shares_positive"),
            models.CheckConstraint(condition=Q(limit_price__gt=0), name="order_limit_positive"),
            models.CheckConstraint(
                condition=Q(filled__gte=0, filled__lte=F("shares")), name="order_filled_in_range"
            ),
            # Filled means every share traded, and a waiting order still has some to trade.
            models.CheckConstraint(
                condition=(Q(state="filled") & Q(filled=F("shares")))
                | (~Q(state="filled") & Q(filled__lt=F("shares"))),
                name="order_filled_iff_complete",
            ),
            models.CheckConstraint(
                condition=Q(state="open", closed_at__isnull=True)
                | (~Q(state="open") & Q(closed_at__isnull=False)),
                name="order_closed_iff_not_open",
            ),
        ]
        indexes = [
            # The trade function's probe (is any waiting order within reach of the new price?)
            # and the fill pass's priority: per term and side, by limit, then time.
            models.Index(
                fields=["term", "side", "limit_price", "created_at"],
                condition=Q(state="open"),
                name="order_open_by_limit",
            ),
            models.Index(fields=["account", "-created_at"], name="order_account_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.side} {self.shares} × {self.term_id} at {self.limit_price} (order {self.pk})"

    @property
    def remaining(self) -> int:
        return self.shares - self.filled

    @property
    def is_open(self) -> bool:
        return self.state == self.State.OPEN


class OrderFill(models.Model):
    """One fill of an order: the trade it was, and when the price move that allowed it
    committed (``triggered_at``; the trade's own time minus this is how promptly it filled)."""

    order = models.ForeignKey(Order, on_delete=models.PROTECT, related_name="fill_rows")
    number = models.IntegerField()
    trade = models.OneToOneField(
        "market.Trade", on_delete=models.PROTECT, related_name="order_fill"
    )
    triggered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["order", "number"]
        constraints = [
            models.UniqueConstraint(fields=["order", "number"], name="one_fill_per_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="fill_number_positive"),
        ]

    def __str__(self) -> str:
        return f"fill {self.number} of order {self.order_id}: trade {self.trade_id}"


def describe(order: Order, phrase: str) -> str:
    """``Buy up to 10 shares of “KV cache” at most 1.20 credits a share``."""
    from ..units import format_credits, format_shares

    buying = order.side == Side.BUY
    return (
        f"{'Buy' if buying else 'Sell'} up to {format_shares(order.shares)} of “{phrase}” at "
        f"{'most' if buying else 'least'} {format_credits(order.limit_price)} a share"
    )


@dataclass(frozen=True, slots=True)
class Filled:
    """What an order's fills came to: shares, their cost on the curve and the fees (µ¢)."""

    shares: int
    amount: int
    fee: int

    @property
    def average_price(self) -> int:
        return self.amount // self.shares if self.shares else 0


def filled_so_far(order: Order) -> Filled:
    # From the fill rows (each fill is one trade), so this module need not import the trades'.
    totals = OrderFill.objects.filter(order=order).aggregate(
        shares=Sum("trade__shares"), amount=Sum("trade__amount"), fee=Sum("trade__fee")
    )
    return Filled(
        shares=totals["shares"] or 0, amount=totals["amount"] or 0, fee=totals["fee"] or 0
    )
