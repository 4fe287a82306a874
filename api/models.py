"""The API's own rows: readers' personal tokens and the nightly dumps' files."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class Scope(models.TextChoices):
    READ_PRIVATE = "read-private", "Read your own account, orders and library"
    TRADE = "trade", "Quote, trade, place and cancel orders, follow terms"
    LIBRARY = "library", "Save and tag papers"


class TokenQuerySet(models.QuerySet):
    def live(self) -> TokenQuerySet:
        return self.filter(revoked_at__isnull=True, user__is_active=True)


class Token(models.Model):
    """A reader's personal token. Only the SHA-256 of its secret is stored: the secret is
    shown once, when it is made, and a stolen table gives no one a usable token. A secret
    holds 256 random bits, so one unsalted hash is enough (there is nothing to guess)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    name = models.CharField(max_length=60)
    digest = models.CharField(max_length=64, unique=True)
    # The secret's first characters, shown beside the name so a reader can tell tokens apart.
    prefix = models.CharField(max_length=12)
    scopes = ArrayField(models.CharField(max_length=16, choices=Scope.choices))
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = TokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class Dump(models.Model):
    """One nightly dump file: a kind of rows (trades, prices, dividends) up to a day."""

    class Kind(models.TextChoices):
        TRADES = "trades", "Trades"
        PRICES = "prices", "Prices"
        DIVIDENDS = "dividends", "Dividends"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    day = models.DateField(help_text="The last UTC day the dump holds")
    file_name = models.CharField(max_length=100, unique=True)
    rows = models.BigIntegerField()
    size = models.BigIntegerField(help_text="Bytes, compressed")
    sha256 = models.CharField(max_length=64)
    made_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day", "kind"]
        constraints = [models.UniqueConstraint(fields=["kind", "day"], name="one_dump_per_day")]

    def __str__(self) -> str:
        return self.file_name
