"""Current price and day change of every listed term, for the hover cards on highlighted words.

Read on every page that shows abstracts, so the whole table is one query (the market table's
own price arithmetic, ``stats.day_changes``) and is cached briefly.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache
from django.utils import timezone

from .highlighting import CACHE_KEY as TERMS_VERSION_KEY
from .models import Term
from .stats import day_changes
from .units import format_credits

TICKER_CACHE_SECONDS = 30


@dataclass(frozen=True, slots=True)
class Ticker:
    phrase: str
    price: int  # µ¢ for the next share
    change_bp: int  # over the last day, in basis points

    @property
    def hover_text(self) -> str:
        change = self.change_bp / 10_000
        return f"{self.phrase}: {format_credits(self.price)} a share, {change:+.1%} today"


def load_tickers() -> dict[int, Ticker]:
    rows = day_changes(terms=Term.objects.listed(), now=timezone.now()).values_list(
        "id", "phrase", "price_now", "change_1d_bp"
    )
    return {pk: Ticker(phrase, price, change) for pk, phrase, price, change in rows}


def current_tickers() -> dict[int, Ticker]:
    key = f"market:tickers:{cache.get(TERMS_VERSION_KEY)}"
    tickers = cache.get(key)
    if tickers is None:
        tickers = load_tickers()
        cache.set(key, tickers, TICKER_CACHE_SECONDS)
    return tickers
