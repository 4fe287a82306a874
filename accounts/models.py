from django.conf import settings
from django.db import models


class Preferences(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    daily_digest = models.BooleanField(
        default=False,
        help_text="Email me after each day's ingest: new papers in the categories I watch "
        "and how the terms I hold moved.",
    )
    public_trader_page = models.BooleanField(
        default=True,
        help_text="Others can see my trader page: holdings, gain and recent trades. "
        "Off, others see me as “a trader” on the leaderboard and on term pages.",
    )

    class Meta:
        verbose_name_plural = "preferences"

    def __str__(self) -> str:
        return f"Preferences of {self.user}"


class DigestDelivery(models.Model):
    """One digest per user and announcement date, so a re-run ingest never mails twice."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    date = models.DateField()
    sent_at = models.DateTimeField(auto_now_add=True)
    paper_count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "date"], name="one_digest_per_user_and_day")
        ]

    def __str__(self) -> str:
        return f"Digest for {self.user} on {self.date}"


# Defined with the functions that use it; imported here so that Django finds the model.
from .attempts import AttemptCount  # noqa: E402, F401
from .saved_searches import SavedSearch  # noqa: E402, F401

# Defined in its own module; imported here so that Django finds the model.
from .session_models import Session  # noqa: E402, F401
