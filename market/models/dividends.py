"""Mentions of a term in papers, and the dividend each mentioning paper pays once."""

from __future__ import annotations

from django.db import models

from .ledger import LedgerTransaction
from .terms import Term


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
    account = models.ForeignKey("market.Account", on_delete=models.PROTECT, related_name="withheld")
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
