"""Follows of terms and the notices a trader is told on the site and in the digest: the rows.
What writes and shows them is ``market.notices``."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .orders import Order


class Follow(models.Model):
    """A reader follows a term: told when it moves past ``threshold_bp`` of its price since the
    last time they were told (or since they followed), and when it pays a dividend."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    term = models.ForeignKey("market.Term", on_delete=models.CASCADE, related_name="follows")
    threshold_bp = models.PositiveIntegerField(
        "move threshold (basis points)", help_text="1,000 is a move of 10% of the price."
    )
    reference_price = models.BigIntegerField(
        "price last told (µ¢)", help_text="Moves are measured from this price."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["term__phrase"]
        constraints = [
            models.UniqueConstraint(fields=["user", "term"], name="one_follow_per_term"),
            models.CheckConstraint(
                condition=Q(threshold_bp__gt=0), name="follow_threshold_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.user} follows {self.term}"


class Notice(models.Model):
    """Something a trader is told once on the site (``seen_at``) and once in the digest
    (``digested_at``). ``text`` is the sentence, written when it happened."""

    class Kind(models.TextChoices):
        ORDER = "order", "Order"
        MOVE = "move", "Price move"
        DIVIDEND = "dividend", "Dividend"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    term = models.ForeignKey("market.Term", on_delete=models.CASCADE, related_name="+", null=True)
    order = models.ForeignKey(
        Order, on_delete=models.CASCADE, related_name="notices", null=True, blank=True
    )
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)
    seen_at = models.DateTimeField(null=True, blank=True)
    digested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [
            models.Index(
                fields=["user", "created_at"],
                condition=Q(seen_at__isnull=True),
                name="notice_unseen",
            ),
            models.Index(
                fields=["user", "created_at"],
                condition=Q(digested_at__isnull=True),
                name="notice_undigested",
            ),
        ]

    def __str__(self) -> str:
        return f"to {self.user_id}: {self.text}"
