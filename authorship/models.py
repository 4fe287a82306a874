"""A reader's claim that a paper is theirs, with the evidence they gave and the curator's
decision. Claims are never deleted: refused and withdrawn ones stay for the record, and the
one-live-claim rule is a partial unique constraint over pending and approved rows only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

ORCID_LENGTH = 19  # 0000-0000-0000-000X


class ClaimQuerySet(models.QuerySet["Claim"]):
    def verified(self) -> ClaimQuerySet:
        """Claims a curator approved: their readers are the papers' verified authors."""
        return self.filter(status=Claim.Status.APPROVED)

    def live(self) -> ClaimQuerySet:
        """Pending or approved: the claims that still stand."""
        return self.filter(status__in=Claim.LIVE)


class Claim(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending review"
        APPROVED = "approved", "Approved"
        REFUSED = "refused", "Refused"
        WITHDRAWN = "withdrawn", "Withdrawn"

    LIVE = (Status.PENDING, Status.APPROVED)

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="claims"
    )
    paper = models.ForeignKey("papers.Paper", on_delete=models.CASCADE, related_name="claims")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    orcid = models.CharField(
        "ORCID iD", max_length=ORCID_LENGTH, blank=True, help_text="0000-0000-0000-000X"
    )
    institution_email = models.EmailField("institutional e-mail", blank=True)
    email_confirmed_at = models.DateTimeField(null=True, blank=True)
    note = models.TextField(blank=True, help_text="The reader's own words")
    reason = models.TextField(
        blank=True, help_text="The curator's reason, shown to the reader on their claims page"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="claims_decided",
    )

    objects = ClaimQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # The database keeps one standing claim per reader and paper, so two racing
            # submissions insert one row; refused and withdrawn claims do not count, so a
            # reader may claim again after either.
            models.UniqueConstraint(
                fields=["user", "paper"],
                condition=models.Q(status__in=["pending", "approved"]),
                name="one_live_claim_per_reader_and_paper",
            ),
        ]
        indexes = [
            # The curator's queue and the paper pages' verified authors.
            models.Index(fields=["paper", "status"], name="claim_paper_status"),
            models.Index(fields=["status", "created_at"], name="claim_status_created"),
        ]

    def __str__(self) -> str:
        return f"{self.paper_id} claimed by {self.user_id} ({self.status})"
