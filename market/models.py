"""Terms, accounts, holdings, the double-entry ledger, trades, mentions and dividends.

Amounts are integer micro-credits (µ¢) and whole shares in 64-bit columns. The cached numbers
(``Account.cash``, ``Holding.shares``, ``Term.supply`` and ``Term.reserve``) are changed only by
``market.trading``; ``manage.py check_ledger`` proves they equal the ledger.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import F, Q
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from django.utils import timezone
from django.utils.text import slugify

from papers.calendar import NEW_YORK, announced_at
from peerrevenue.validators import NUL_IN_JSON, json_contains_nul

from . import curve

# Defined in their own modules (which name this one's models by "market.Name", not by import);
# re-exported here so that Django finds them and callers have one place to import models from.
from .notice_models import Follow as Follow
from .notice_models import Notice as Notice
from .order_book import Order as Order
from .order_book import OrderFill as OrderFill
from .sides import Side

DEFAULT_P0 = 1_000_000  # the first share costs one credit
DEFAULT_K = 10_000  # and each further share 0.01 credit more

# The URL names of a term's own pages, each taking the slug.
TERM_PAGES = ("term", "quote", "quote_json", "offer_json", "trade", "place_order", "follow")


def slug_is_reserved(slug: str) -> bool:
    """Whether a term with this slug would lose one of its pages to a fixed page.

    ``/market/rules/`` is the rules page, matched before the term pattern, so a term slugged
    "rules" would have no page. Asking the URLconf (rather than keeping a list of names) keeps
    this right when another fixed page arrives under ``/market/``.
    """
    for name in TERM_PAGES:
        try:
            match = resolve(reverse(f"market:{name}", args=[slug]))
        except (NoReverseMatch, Resolver404):  # not a URL slug at all; nothing to shadow it
            return False
        if match.view_name != f"market:{name}" or match.kwargs.get("slug") != slug:
            return True
    return False


class TermQuerySet(models.QuerySet):
    def listed(self) -> TermQuerySet:
        return self.filter(status=Term.Status.LISTED)

    def _set_status(self, status: str, reason: str) -> int:
        # A plain update: the database moves the term-set stamp that kept pages key on, and
        # a term leaving "listed" cancels its waiting orders with a notice to each owner
        # (market/sql/closed_terms.sql), shown on their next page (market.notices.news_sql).
        return self.update(status=status, status_reason=reason)

    def halt(self, *, reason: str) -> int:
        return self.exclude(status=Term.Status.DELISTED)._set_status(Term.Status.HALTED, reason)

    def delist(self, *, reason: str = "") -> int:
        return self._set_status(Term.Status.DELISTED, reason)

    def relist(self) -> int:
        return self._set_status(Term.Status.LISTED, "")


class Term(models.Model):
    """A word or phrase that trades on the market, on its own bonding curve."""

    class Status(models.TextChoices):
        LISTED = "listed", "Listed"
        HALTED = "halted", "Halted"
        DELISTED = "delisted", "Delisted"

    # Changed by market.trading only, with relative updates under the row lock; Term.save()
    # never writes them back, so an admin form loaded before a trade cannot undo it.
    MARKET_STATE_FIELDS = ("supply", "reserve", "version", "stamp")

    phrase = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=200, unique=True, blank=True)
    aliases = models.JSONField(
        default=list, blank=True, help_text="Other spellings that count as this term."
    )
    description = models.TextField(blank=True, help_text="Markdown.")
    p0 = models.BigIntegerField(
        "first share price (µ¢)", default=DEFAULT_P0, help_text="Price of the first share."
    )
    k = models.BigIntegerField(
        "price step (µ¢)", default=DEFAULT_K, help_text="Price increase per share outstanding."
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.LISTED)
    status_reason = models.TextField(blank=True, help_text="Why trading is halted or delisted.")
    supply = models.BigIntegerField(default=0, editable=False)
    reserve = models.BigIntegerField("reserve (µ¢)", default=0, editable=False)
    version = models.BigIntegerField(
        default=0, editable=False, help_text="Number of trades so far; each trade bumps it."
    )
    # Moved by the database on every change of the row, trades included (market/sql/stamps.sql):
    # what the term's kept pieces are keyed by (peerrevenue.keep).
    stamp = models.BigIntegerField(default=0, editable=False)
    listed_at = models.DateTimeField(
        default=timezone.now,
        editable=False,
        help_text="When it was listed: papers announced before this moment pay no dividend on it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = TermQuerySet.as_manager()

    class Meta:
        ordering = ["phrase"]
        constraints = [
            models.CheckConstraint(condition=Q(supply__gte=0), name="term_supply_non_negative"),
            models.CheckConstraint(condition=Q(reserve__gte=0), name="term_reserve_non_negative"),
            models.CheckConstraint(condition=Q(p0__gte=1), name="term_p0_positive"),
            models.CheckConstraint(condition=Q(k__gte=0), name="term_k_non_negative"),
            models.CheckConstraint(condition=Q(version__gte=0), name="term_version_non_negative"),
        ]

    def __str__(self) -> str:
        return self.phrase

    def save(self, *args, **kwargs) -> None:
        if not self.slug:
            self.slug = slugify(self.phrase)
        if slug_is_reserved(self.slug):
            self.slug = self._unreserved_slug(self.slug)
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = [*kwargs["update_fields"], "slug"]
        if self._state.adding:
            if self.supply or self.reserve or self.version:
                raise ValueError("A new term starts with no shares; trade through market.trading.")
            super().save(*args, **kwargs)
        else:
            names = kwargs.get("update_fields")
            if names is None:
                names = [f.name for f in self._meta.concrete_fields if not f.primary_key]
            kwargs["update_fields"] = [n for n in names if n not in self.MARKET_STATE_FIELDS]
            with transaction.atomic():
                # Lock first: a buy between our check and our write would price shares on a
                # curve that no longer matches the reserve.
                Term.objects.select_for_update().filter(pk=self.pk).values("pk").first()
                if self._curve_changed_with_shares_out():
                    raise ValidationError(
                        "p0 and k can change only while no shares are outstanding."
                    )
                super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        try:
            return reverse("market:term", args=[self.slug])
        except NoReverseMatch:  # the market pages arrive in a later issue
            return f"/market/{self.slug}/"

    @property
    def first_paying_date(self) -> dt.date:
        """The first listing day whose papers pay this term a dividend: the first one announced
        (20:00 New York, the day before) at or after the moment the term was listed."""
        day = timezone.localtime(self.listed_at, NEW_YORK).date()
        while announced_at(day) < self.listed_at:
            day += dt.timedelta(days=1)
        return day

    @property
    def curve_params(self) -> dict[str, int]:
        return {"p0": self.p0, "k": self.k}

    @property
    def price(self) -> int:
        """µ¢ price of the next share."""
        return curve.price(self.supply, p0=self.p0, k=self.k)

    @property
    def is_tradable(self) -> bool:
        return self.status == self.Status.LISTED

    def clean(self) -> None:
        self.phrase = " ".join(self.phrase.split())
        if not slugify(self.phrase):
            raise ValidationError({"phrase": "The phrase needs at least one letter or digit."})
        if not isinstance(self.aliases, list) or not all(isinstance(a, str) for a in self.aliases):
            raise ValidationError({"aliases": 'Give a list of strings, e.g. ["KV-cache"].'})
        if json_contains_nul(self.aliases):
            raise ValidationError({"aliases": NUL_IN_JSON})
        if self.pk and self._curve_changed_with_shares_out():
            raise ValidationError("p0 and k can change only while no shares are outstanding.")
        self._check_curve_bounds()

    def _check_curve_bounds(self) -> None:
        """Refuse a curve on which some reachable state would overflow a 64-bit column (every
        buy would then fail): the reserve of ``curve.MAX_SUPPLY`` shares must fit."""
        if type(self.p0) is not int or type(self.k) is not int:
            return  # the fields' own validation reports it
        if self.p0 > curve.MAX_P0:
            raise ValidationError(
                {
                    "p0": f"The first share may cost at most {curve.MAX_P0:,} µ¢, so that the "
                    f"reserve of {curve.MAX_SUPPLY:,} shares fits in the ledger."
                }
            )
        if self.p0 >= 1 and self.k > curve.max_k(p0=self.p0):
            raise ValidationError(
                {
                    "k": f"With a first share of {self.p0:,} µ¢ the price step may be at most "
                    f"{curve.max_k(p0=self.p0):,} µ¢, so that the reserve of "
                    f"{curve.MAX_SUPPLY:,} shares fits in the ledger."
                }
            )

    def _unreserved_slug(self, slug: str) -> str:
        """A slug near ``slug`` that no fixed page and no other term uses: "rules-term", then
        "rules-term-2" and so on (the admin refuses a reserved slug typed by hand; this is
        for slugs made from the phrase, or given in code)."""
        base = f"{slug}-term"
        others = Term.objects.exclude(pk=self.pk) if self.pk else Term.objects.all()
        candidate, n = base, 1
        while slug_is_reserved(candidate) or others.filter(slug=candidate).exists():
            n += 1
            candidate = f"{base}-{n}"
        return candidate

    def _curve_changed_with_shares_out(self) -> bool:
        current = Term.objects.filter(pk=self.pk).values("supply", "p0", "k").first()
        return bool(
            current and current["supply"] and (current["p0"], current["k"]) != (self.p0, self.k)
        )


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


class Mention(models.Model):
    """A paper whose title or abstract mentions a term, counted by market.highlighting."""

    term = models.ForeignKey(Term, on_delete=models.CASCADE, related_name="mentions")
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="mentions")
    date = models.DateField(help_text="Announcement date on which it was counted.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-date", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["term", "paper"], name="unique_mention_per_paper")
        ]
        indexes = [models.Index(fields=["term", "-date"], name="mention_term_date")]

    def __str__(self) -> str:
        return f"{self.term} in {self.paper_id}"


class DividendEvent(models.Model):
    """The dividend for one term and one mentioning paper: paid once, ever."""

    class WindowSource(models.TextChoices):
        SUBMITTED = "submitted", "the paper's submission"
        PERIOD = "period", "the start of its submission period"
        # Paid before the window rule: the window is the announcement instant alone.
        ANNOUNCEMENT = "announcement", "the announcement (paid before the window rule)"

    term = models.ForeignKey(Term, on_delete=models.PROTECT, related_name="dividend_events")
    paper = models.ForeignKey(
        "papers.Paper", on_delete=models.PROTECT, related_name="dividend_events"
    )
    category = models.ForeignKey(
        "papers.Category", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    date = models.DateField(help_text="Listing date of the paper.")
    announced_at = models.DateTimeField(
        help_text="When that listing was announced: the shares held at this instant are paid."
    )
    per_share = models.BigIntegerField("dividend per share (µ¢)")
    window_opens_at = models.DateTimeField(
        help_text="When the paper's submission window opened: only shares held from then to "
        "the announcement are paid (market/windows.py)."
    )
    window_source = models.CharField(max_length=16, choices=WindowSource.choices)
    shares = models.BigIntegerField(
        help_text="Shares paid: held through the window, withheld ones not counted (0 if it "
        "came before the term was listed)."
    )
    transaction = models.ForeignKey(
        LedgerTransaction,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="dividend_events",
        help_text="Empty when nobody held shares.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-date", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["term", "paper"], name="one_dividend_per_term_paper"),
        ]

    def __str__(self) -> str:
        return f"{self.term} for {self.paper_id}: {self.per_share} µ¢ × {self.shares}"

    @property
    def amount(self) -> int:
        return self.per_share * self.shares


class WithheldDividend(models.Model):
    """A dividend not paid to a verified author's shares for a mention in their own paper:
    recorded, with the claim that made them its author, so the payout's explanation and the
    author's trader page show it and the ledger check proves it."""

    event = models.ForeignKey(DividendEvent, on_delete=models.PROTECT, related_name="withheld")
    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="withheld")
    claim = models.ForeignKey(
        "authorship.Claim", on_delete=models.PROTECT, related_name="withheld_dividends"
    )
    shares = models.BigIntegerField(help_text="Shares held through the window, not paid.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        constraints = [
            models.UniqueConstraint(fields=["event", "account"], name="one_withholding_per_event"),
        ]

    def __str__(self) -> str:
        return f"{self.shares} shares of account {self.account_id} withheld from {self.event_id}"

    @property
    def amount(self) -> int:
        return self.shares * self.event.per_share


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


class TermProposal(models.Model):
    """A phrase a trader asks the curators to list, with their reason.

    ``term`` is set when a listed term covers the phrase; the proposer is then e-mailed once
    (when it is set) and shown a notice once (``notice_shown_at``).
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="term_proposals"
    )
    phrase = models.CharField(max_length=100)
    reason = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    term = models.ForeignKey(
        Term, on_delete=models.SET_NULL, null=True, blank=True, related_name="proposals"
    )
    listed_at = models.DateTimeField(null=True, blank=True)
    notice_shown_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The notice check runs on every signed-in request: it must be an index probe.
            models.Index(
                fields=["user"],
                condition=Q(listed_at__isnull=False, notice_shown_at__isnull=True),
                name="proposal_unseen_notice",
            ),
        ]

    def __str__(self) -> str:
        return f"“{self.phrase}” proposed by {self.user}"

    @property
    def is_open(self) -> bool:
        return self.listed_at is None
