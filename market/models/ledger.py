"""The double-entry ledger: transactions and their entries (legs), in integer micro-credits
(µ¢) and whole shares."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .accounts import Account
from .terms import Term


class LedgerTransaction(models.Model):
    """One movement of money or shares; its entries sum to zero per asset."""

    class Kind(models.TextChoices):
        GRANT = "grant", "Starting grant"
        TRADE = "trade", "Trade"
        DIVIDEND = "dividend", "Dividend"
        ADJUSTMENT = "adjustment", "Balance adjustment"

    # Transactions that bring new money in from the issuance account.
    MINTING_KINDS = (Kind.GRANT, Kind.DIVIDEND, Kind.ADJUSTMENT)

    kind = models.CharField(max_length=16, choices=Kind.choices)
    memo = models.TextField(blank=True)
    # Not indexed: every trade inserts a transaction, and nothing looks them up by author.
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        verbose_name = "ledger transaction"

    def __str__(self) -> str:
        return f"#{self.pk} {self.get_kind_display()}"


class Entry(models.Model):
    """One leg of a ledger transaction.

    The asset is cash (µ¢) or shares of ``term``. Where it sits is ``account``; an entry with
    no account sits in the term's pool: for cash that is the term's reserve, for shares it is the
    issuing side (minus the supply), so buying shares moves them from the pool to the buyer.
    """

    class Asset(models.TextChoices):
        CASH = "cash", "Cash (µ¢)"
        SHARES = "shares", "Shares"

    transaction = models.ForeignKey(
        LedgerTransaction, on_delete=models.PROTECT, related_name="entries"
    )
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, null=True, blank=True, related_name="entries"
    )
    # Not indexed: every trade inserts five entries, and they are looked up by transaction or
    # account; the checks that sum them per term scan the table anyway.
    term = models.ForeignKey(
        Term,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="entries",
        db_index=False,
    )
    asset = models.CharField(max_length=8, choices=Asset.choices)
    amount = models.BigIntegerField()

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "entries"
        constraints = [
            models.CheckConstraint(condition=~Q(amount=0), name="entry_amount_non_zero"),
            # Cash sits in an account or in one term's reserve, never both.
            models.CheckConstraint(
                condition=~Q(asset="cash")
                | Q(account__isnull=True, term__isnull=False)
                | Q(account__isnull=False, term__isnull=True),
                name="entry_cash_location",
            ),
            models.CheckConstraint(
                condition=~Q(asset="shares") | Q(term__isnull=False), name="entry_shares_have_term"
            ),
        ]

    def __str__(self) -> str:
        where = self.account_id and f"account {self.account_id}" or f"pool of term {self.term_id}"
        what = "µ¢" if self.asset == self.Asset.CASH else f"shares of term {self.term_id}"
        return f"{self.amount:+,} {what} @ {where}"
