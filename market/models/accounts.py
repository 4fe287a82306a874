"""Accounts (a trader's cash, and the system's issuance and fee accounts), holdings of
shares, and each account's worth at the end of each day.

The cached numbers (``Account.cash``, ``Holding.shares``) are changed only by
``market.trading``; ``manage.py check_ledger`` proves they equal the ledger."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .terms import Term


class AccountQuerySet(models.QuerySet):
    def system(self, kind: str, *, shard: int = 0) -> Account:
        """The issuance account or a fee shard, created on first use (tests may flush tables)."""
        account, _ = self.get_or_create(kind=kind, shard=shard, user=None)
        return account

    def fees_collected(self) -> int:
        """All fees ever collected, in µ¢: the sum of the fee account's shards."""
        return self.filter(kind=Account.Kind.FEES).aggregate(total=models.Sum("cash"))["total"] or 0

    def users(self) -> AccountQuerySet:
        return self.filter(kind=Account.Kind.USER)


class Account(models.Model):
    """Cash, in µ¢. One per user, plus the issuance account (which mints grants and dividends,
    so its balance is minus everything ever minted) and the fee account.

    The fee account is kept in ``FEE_SHARDS`` rows, and a trade pays its fee to the shard of
    its term (``term_id % FEE_SHARDS``). Every trade writes a fee, so with a single row every
    trade in the market would queue for that row's lock; sharded by term, trades wait on a fee
    row only when they already share (or happen to collide with) a term.
    """

    FEE_SHARDS = 16

    class Kind(models.TextChoices):
        USER = "user", "User"
        ISSUANCE = "issuance", "Issuance"
        FEES = "fees", "Fees"

    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.USER)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="market_account",
    )
    cash = models.BigIntegerField("cash (µ¢)", default=0)
    shard = models.PositiveSmallIntegerField(
        default=0, help_text="Which row of a sharded system account (fees); 0 otherwise."
    )
    # The sample's made-up traders (market.demo), marked wherever traders are listed so that
    # nobody takes their trades for people's.
    demo = models.BooleanField(
        default=False, editable=False, help_text="A demo trader of the local sample market."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = AccountQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind="issuance") | Q(cash__gte=0), name="account_cash_non_negative"
            ),
            models.CheckConstraint(
                condition=(Q(kind="user") & Q(user__isnull=False))
                | (~Q(kind="user") & Q(user__isnull=True)),
                name="account_user_iff_user_kind",
            ),
            models.UniqueConstraint(
                fields=["kind", "shard"],
                condition=~Q(kind="user"),
                name="one_account_per_system_kind_shard",
            ),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.USER:
            return f"{self.user} (account {self.pk})"
        if self.kind == self.Kind.FEES:
            return f"Fee account, shard {self.shard}"
        return f"{self.get_kind_display()} account"


class Holding(models.Model):
    # Indexed by the unique (account, term) constraint, which starts with it.
    account = models.ForeignKey(
        Account, on_delete=models.PROTECT, related_name="holdings", db_index=False
    )
    term = models.ForeignKey(Term, on_delete=models.PROTECT, related_name="holdings")
    shares = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["account", "term"]
        constraints = [
            models.UniqueConstraint(fields=["account", "term"], name="one_holding_per_term"),
            models.CheckConstraint(condition=Q(shares__gte=0), name="holding_non_negative"),
        ]

    def __str__(self) -> str:
        return f"{self.account}: {self.shares} × {self.term}"


class NetWorthSnapshot(models.Model):
    """An account's worth at the end of one UTC day, kept by a daily Celery beat task.

    ``granted`` is what the account had been given by then (starting grant and adjustments), so
    a gain over a period is the change in ``net_worth - granted``: an adjustment in between is
    not a gain.
    """

    # Indexed by the unique (account, date) constraint, which starts with it.
    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="snapshots", db_index=False
    )
    date = models.DateField()
    cash = models.BigIntegerField("cash (µ¢)")
    holdings_value = models.BigIntegerField("shares at sell-back value (µ¢)")
    net_worth = models.BigIntegerField("net worth (µ¢)")
    granted = models.BigIntegerField("given so far (µ¢)")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["account", "date"]
        get_latest_by = "date"
        constraints = [
            models.UniqueConstraint(fields=["account", "date"], name="one_snapshot_per_day"),
        ]

    def __str__(self) -> str:
        return f"{self.account} on {self.date}: {self.net_worth} µ¢"

    @property
    def gain(self) -> int:
        return self.net_worth - self.granted
