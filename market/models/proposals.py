"""A phrase a trader proposes for listing."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from .terms import Term


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
