"""Current price and day change of every listed term, for the hover titles on highlighted words.

A price changes only when a trade moves its term's supply (dividends are paid in cash and move
no supply), and the table's rows change only with the term set. So the table is kept under a key
made of the term-set version and the prices version (``market.versions``), a token every trade
replaces once it commits (dividends and adjustments replace it too, for the other market
pieces, which costs this table one reload): one read of the shared cache per page (both tokens
at once) tells whether the table is still current, and then it comes from this process's memory,
not unpickled from the shared cache on every use. The day change also moves with the clock, so
no table is used for longer than ``TICKER_CACHE_SECONDS``; that also bounds how long a trade
whose process died between its commit and its token could go unseen.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.utils import timezone

from .models import Term
from .stats import day_changes
from .units import format_credits
from .versions import FIGURES_SECONDS, market_versions

TICKER_CACHE_SECONDS = FIGURES_SECONDS


@dataclass(frozen=True, slots=True)
class Ticker:
    slug: str
    phrase: str
    price: int  # µ¢ for the next share
    change_bp: int  # over the last day, in basis points

    @property
    def change_text(self) -> str:
        """``+4.5%``: the change over the last day."""
        return f"{self.change_bp / 10_000:+.1%}"

    @property
    def hover_text(self) -> str:
        return f"{self.phrase}: {format_credits(self.price)} a share, {self.change_text} today"


def load_tickers() -> dict[int, Ticker]:
    rows = day_changes(terms=Term.objects.listed(), now=timezone.now()).values_list(
        "id", "slug", "phrase", "price_now", "change_1d_bp"
    )
    return {pk: Ticker(slug, phrase, price, change) for pk, slug, phrase, price, change in rows}


# (key, wall-clock expiry, table): the last table this process used. Replaced whole, never
# mutated, so readers on other threads need no lock; the lock only keeps two threads from
# loading the same table at once.
_recent: tuple[str, float, dict[int, Ticker]] | None = None
_loading = threading.Lock()


def current_tickers() -> dict[int, Ticker]:
    """Every listed term's ticker by id; see ``current_price_table``."""
    return current_price_table(*market_versions())[1]


def current_price_table(terms: str, prices: str) -> tuple[str, dict[int, Ticker]]:
    """(name, tickers by term id) for the ``market_versions()`` a page has read: the name
    changes whenever a price, the term set or (every ``TICKER_CACHE_SECONDS``) the day does."""
    global _recent
    key = f"market:ticker-table:{terms}:{prices}"
    recent = _recent
    if recent is not None and recent[0] == key and recent[1] > time.time():
        return f"{key}@{recent[1]}", recent[2]
    with _loading:
        entry = cache.get(key)
        if entry is None or entry[0] <= time.time():
            entry = (time.time() + TICKER_CACHE_SECONDS, load_tickers())
            cache.set(key, entry, TICKER_CACHE_SECONDS)
        _recent = (key, *entry)
    return f"{key}@{entry[0]}", entry[1]
