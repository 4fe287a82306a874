"""How far a reader has read their front page."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ReadingMark(models.Model):
    """How far a signed-in reader has read their front page, for "new since your last visit".

    ``seen_through`` is the newest announcement day their front page has shown them;
    ``new_after`` is where the divider stands: days after it arrived since the visit before.
    Dates, not times: an ingest that runs late still counts as new.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reading_mark"
    )
    seen_through = models.DateField(null=True, blank=True)
    new_after = models.DateField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.user} has read through {self.seen_through or 'nothing yet'}"
