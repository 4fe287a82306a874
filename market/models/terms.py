"""A term: a word or phrase that trades on its own bonding curve, and the slugs its pages
may not take."""

from __future__ import annotations

import datetime as dt

from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import Q
from django.urls import NoReverseMatch, Resolver404, resolve, reverse
from django.utils import timezone
from django.utils.text import slugify

from papers.calendar import NEW_YORK, announced_at
from peerrevenue.validators import NUL_IN_JSON, json_contains_nul

from .. import curve

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
