"""The buy/sell forms: parsing what a person typed into whole shares and µ¢, with messages
that say what to type instead. Prices and refusals are decided by ``market.trading``."""

from __future__ import annotations

import re
from decimal import ROUND_FLOOR, Decimal

from django import forms
from django.conf import settings

from .models import Trade
from .trade_statements import KEY_MAX_LENGTH
from .units import MICRO_PER_CREDIT, parse_credits

INPUT_MAX_LENGTH = 30
_WHOLE = re.compile(r"[+-]?[0-9]+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?[0-9]*\.[0-9]+", re.ASCII)
_KEY = re.compile(r"[A-Za-z0-9_-]+", re.ASCII)

SIDE_CHOICES = [(Trade.Side.BUY, "Buy"), (Trade.Side.SELL, "Sell")]
# One-click orders whose size the server works out for the signed-in trader.
BUY_MAX, SELL_ALL = "max", "all"
PRESET_CHOICES = [("", ""), (BUY_MAX, "Buy max (for my cash)"), (SELL_ALL, "Sell all")]
SIDE_ERRORS = {"required": "Choose buy or sell.", "invalid_choice": "Choose buy or sell."}


def parse_share_count(text: str) -> int:
    """A whole number of shares from 1 to the per-trade maximum, or a ValidationError that
    says what is wrong with it."""
    limit = settings.MARKET_MAX_SHARES_PER_TRADE
    cleaned = (text or "").strip().replace(",", "").replace("_", "").replace(" ", "")
    if not cleaned:
        raise forms.ValidationError("Enter a number of shares, for example 5.")
    if _DECIMAL.fullmatch(cleaned):
        value = Decimal(cleaned)
        if value != value.to_integral_value():
            low = int(value.to_integral_value(rounding=ROUND_FLOOR))
            raise forms.ValidationError(
                f"Shares are whole: enter {low} or {low + 1}, not {text.strip()}."
                if low >= 1
                else "Shares are whole: enter at least 1."
            )
        cleaned = str(int(value))
    if not _WHOLE.fullmatch(cleaned):
        raise forms.ValidationError(
            f"“{text.strip()[:INPUT_MAX_LENGTH]}” is not a whole number. "
            "Enter digits only, for example 5."
        )
    shares = int(cleaned)
    if shares < 0:
        raise forms.ValidationError("Enter a positive number of shares, at least 1.")
    if shares == 0:
        raise forms.ValidationError("Enter at least 1 share.")
    if shares > limit:
        raise forms.ValidationError(
            f"At most {limit:,} shares a trade; split a bigger order into several trades."
        )
    return shares


def parse_budget(text: str) -> int:
    """A positive amount of credits as µ¢."""
    stripped = (text or "").strip()
    if len(stripped) > INPUT_MAX_LENGTH:
        raise forms.ValidationError("That budget is far too large; enter a number of credits.")
    try:
        micro = parse_credits(stripped)
    except ValueError as exc:
        if "decimal places" in str(exc):
            raise forms.ValidationError(
                "Credits have at most six decimal places (one µ¢)."
            ) from None
        raise forms.ValidationError(
            f"“{stripped}” is not an amount of credits. Enter a number such as 25 or 12.50."
        ) from None
    if micro <= 0:
        raise forms.ValidationError("Enter a budget above zero credits.")
    return micro


class QuoteForm(forms.Form):
    """What the trader asks for: buy or sell, and either shares or (buying) a credit budget."""

    side = forms.ChoiceField(
        choices=SIDE_CHOICES,
        widget=forms.RadioSelect,
        initial=Trade.Side.BUY,
        error_messages=SIDE_ERRORS,
    )
    shares = forms.CharField(
        required=False,
        label="Number of shares",
        max_length=200,
        error_messages={"max_length": "That is not a number of shares; enter one like 5."},
        widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off", "size": 8}),
    )
    budget = forms.CharField(
        required=False,
        label="Budget in credits",
        max_length=200,
        help_text="Buying only: the most whole shares this pays for, fee included. "
        "Leave the number of shares empty.",
        widget=forms.TextInput(attrs={"inputmode": "decimal", "autocomplete": "off", "size": 8}),
    )
    preset = forms.ChoiceField(
        required=False,
        choices=PRESET_CHOICES,
        widget=forms.HiddenInput,
        error_messages={"invalid_choice": "Choose “Buy max” or “Sell all”."},
    )

    def clean_shares(self) -> int | None:
        text = self.cleaned_data.get("shares", "")
        return parse_share_count(text) if text.strip() else None

    def clean_budget(self) -> int | None:
        text = self.cleaned_data.get("budget", "")
        return parse_budget(text) if text.strip() else None

    def clean(self) -> dict:
        super().clean()
        data = self.cleaned_data
        shares, budget = data.get("shares"), data.get("budget")
        if data.get("preset"):
            # The button decides the side and the size; whatever was typed is ignored.
            data["side"] = Trade.Side.BUY if data["preset"] == BUY_MAX else Trade.Side.SELL
            data["shares"] = data["budget"] = None
            for name in ("shares", "budget", "side"):
                self.errors.pop(name, None)
            return data
        if self.errors:
            return data
        if shares is None and budget is None:
            raise forms.ValidationError(
                "Enter a number of shares, or a budget in credits to spend."
            )
        if shares is not None and budget is not None:
            raise forms.ValidationError("Enter either a number of shares or a budget, not both.")
        if budget is not None and data.get("side") == Trade.Side.SELL:
            self.add_error("budget", "A budget is for buying; to sell, enter a number of shares.")
        return data

    def order(self) -> dict:
        """The valid order as ``market.views.quotes.price_request`` takes it: side, shares,
        budget, preset."""
        return {
            name: self.cleaned_data.get(name) for name in ("side", "shares", "budget", "preset")
        }


class TradeForm(forms.Form):
    """The confirmation of a quote: exactly what was quoted, the quoted total as the limit, and
    the idempotency key that makes a second submission return the first trade."""

    ALTERED = "This confirmation is incomplete or was changed. Get a new quote and confirm it."

    side = forms.ChoiceField(choices=SIDE_CHOICES, error_messages=SIDE_ERRORS)
    shares = forms.CharField(
        max_length=200, error_messages={"required": ALTERED, "max_length": ALTERED}
    )
    limit = forms.CharField(
        max_length=INPUT_MAX_LENGTH, error_messages={"required": ALTERED, "max_length": ALTERED}
    )
    key = forms.CharField(
        max_length=KEY_MAX_LENGTH,
        error_messages={
            "required": "This confirmation has no key, so a repeat could trade twice. "
            "Get a new quote and confirm it.",
            "max_length": ALTERED,
        },
    )

    def clean_shares(self) -> int:
        return parse_share_count(self.cleaned_data["shares"])

    def clean_limit(self) -> int:
        text = self.cleaned_data["limit"].strip()
        if not _WHOLE.fullmatch(text) or int(text) < 0:
            raise forms.ValidationError(self.ALTERED)
        return int(text)

    def clean_key(self) -> str:
        key = self.cleaned_data["key"].strip()
        if not _KEY.fullmatch(key):
            raise forms.ValidationError(self.ALTERED)
        return key


# How long a limit order waits: (form value, label, seconds or None for "until cancelled").
EXPIRY_CHOICES = [
    ("", "Until filled or cancelled", None),
    ("1h", "1 hour", 3600),
    ("1d", "1 day", 86_400),
    ("7d", "7 days", 7 * 86_400),
]


class OrderForm(forms.Form):
    """A limit order: buy or sell up to a number of shares at a limit price per share (in
    credits, as prices are shown), for a while, with the key that makes a second submission
    place one order."""

    side = forms.ChoiceField(
        choices=SIDE_CHOICES,
        widget=forms.RadioSelect,
        initial=Trade.Side.BUY,
        error_messages=SIDE_ERRORS,
    )
    shares = forms.CharField(max_length=200, label="How many, at most")
    limit = forms.CharField(
        max_length=INPUT_MAX_LENGTH,
        label="Limit (credits a share)",
        help_text="Buying: the most you pay for any one share. Selling: the least you take.",
    )
    expires = forms.ChoiceField(
        required=False, choices=[(v, label) for v, label, _ in EXPIRY_CHOICES], label="Waits"
    )
    key = forms.CharField(max_length=KEY_MAX_LENGTH, widget=forms.HiddenInput)

    def clean_shares(self) -> int:
        return parse_share_count(self.cleaned_data["shares"])

    def clean_limit(self) -> int:
        text = self.cleaned_data["limit"].strip()
        try:
            micro = parse_credits(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if micro < MICRO_PER_CREDIT // 100:
            # Shown to two decimals, anything less would read "at most 0.00 credits a share".
            raise forms.ValidationError("Enter a limit of at least 0.01 credits a share.")
        return micro

    def clean_key(self) -> str:
        key = self.cleaned_data["key"].strip()
        if not _KEY.fullmatch(key):
            raise forms.ValidationError(TradeForm.ALTERED)
        return key

    def expiry_seconds(self) -> int | None:
        wanted = self.cleaned_data.get("expires") or ""
        return next(seconds for value, _, seconds in EXPIRY_CHOICES if value == wanted)
