"""A trade: shares bought from or sold back to a term's curve, with its ledger transaction."""

from __future__ import annotations

from django.db import models
from django.db.models import F, Q

from ..sides import Side
from .accounts import Account
from .ledger import LedgerTransaction
from .terms import Term


class Trade(models.Model):
    Side = Side

    # Both indexed by the unique constraints that start with them: (account, key) and
    # (term, term_version), which also orders a term's trades in time for price charts.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="trades", db_index=False
    )
    term = models.ForeignKey(Term, on_delete=models.PROTECT, related_name="trades", db_index=False)
    transaction = models.OneToOneField(
        LedgerTransaction, on_delete=models.PROTECT, related_name="trade"
    )
    key = models.CharField(max_length=100, help_text="The client's idempotency key.")
    side = models.CharField(max_length=4, choices=Side.choices)
    shares = models.BigIntegerField()
    amount = models.BigIntegerField("amount (µ¢)", help_text="Curve amount, fee excluded.")
    fee = models.BigIntegerField("fee (µ¢)")
    supply_before = models.BigIntegerField()
    supply_after = models.BigIntegerField()
    price_before = models.BigIntegerField("price before (µ¢)")
    price_after = models.BigIntegerField("price after (µ¢)")
    term_version = models.BigIntegerField(help_text="The term's version after this trade.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["account", "key"], name="unique_trade_key_per_account"),
            models.UniqueConstraint(fields=["term", "term_version"], name="unique_trade_version"),
            models.CheckConstraint(condition=Q(shares__gt=0), name="trade_shares_positive"),
            models.CheckConstraint(condition=Q(amount__gte=0), name="trade_amount_non_negative"),
            models.CheckConstraint(condition=Q(fee__gte=0), name="trade_fee_non_negative"),
            models.CheckConstraint(
                condition=Q(supply_before__gte=0, supply_after__gte=0),
                name="trade_supply_non_negative",
            ),
            models.CheckConstraint(
                condition=(Q(side="buy") & Q(supply_after=F("supply_before") + F("shares")))
                | (Q(side="sell") & Q(supply_after=F("supply_before") - F("shares"))),
                name="trade_supply_moves_by_shares",
            ),
        ]

    # Set on the original trade that market.trading returns for a repeated key: nothing new
    # was traded, and pages say it was placed before.
    repeated = False
    # Set by market.trading on a new trade after which a waiting limit order is within reach.
    orders_reachable = False

    def __str__(self) -> str:
        return f"{self.get_side_display()} {self.shares} × {self.term_id} (trade {self.pk})"

    @property
    def total(self) -> int:
        """What the trader paid (buy) or received (sell), fee included, in µ¢."""
        return self.amount + self.fee if self.side == self.Side.BUY else self.amount - self.fee

    @property
    def cash_change(self) -> int:
        return -self.total if self.side == self.Side.BUY else self.total

    @property
    def shares_change(self) -> int:
        return self.shares if self.side == self.Side.BUY else -self.shares
