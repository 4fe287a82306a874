"""The tokens that say whether market figures shown on a page are still current, and the
pieces of market pages kept by them.

Two tokens, read together in one cache round trip: the terms version (``highlighting``: any
term saved, listed, halted, delisted or edited) and the figures version, replaced by
everything that moves a price, a supply, a holding, cash or a mention count: every trade
(``market.trading``), every dividend payout with the mentions it records
(``market.dividends``) and every balance adjustment (``market.cash``). The rest of what market
pages show changes with the pages generation (``peerrevenue.pagecache``: an ingest, a hidden
paper) or with the clock (day and week changes, a chart that ends now), which a time bucket of
``FIGURES_SECONDS`` bounds. A piece keyed by all of these is as current as a fresh render.

This module imports no other market module, so that the writers (cash, dividends, trading)
can bump the token without import cycles.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from django.core.cache import cache
from django.db import transaction

from peerrevenue import fragments
from peerrevenue.tokens import current_token, replace_token

from .highlighting import CACHE_KEY as TERMS_KEY

PRICES_KEY = "market:prices:version"
# How long clock-driven figures (a day's change, a sparkline ending now) may stand; also how
# long a change whose process died between its commit and its bump could go unseen.
FIGURES_SECONDS = 30


def prices_changed() -> None:
    """Prices, supplies, holdings, cash or mentions moved: every kept market figure is old."""
    replace_token(PRICES_KEY)


def figures_changed() -> None:
    """``prices_changed`` now, and once more after the current transaction commits.

    Now, for this transaction's own later reads; after the commit because a reader in between
    may have kept a piece rendered from the old rows under the token bumped first.
    """
    prices_changed()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(prices_changed)


def market_versions() -> tuple[str, str]:
    """(terms version, prices version): one read of the shared cache for both."""
    found = cache.get_many([TERMS_KEY, PRICES_KEY])
    return (
        current_token(TERMS_KEY, found=found.get(TERMS_KEY)),
        current_token(PRICES_KEY, found=found.get(PRICES_KEY)),
    )


def clock_bucket(now: float | None = None) -> int:
    """The current ``FIGURES_SECONDS`` slice of time; every worker agrees on it."""
    return int((time.time() if now is None else now) // FIGURES_SECONDS)


def market_piece(
    name: str,
    vary_on: Sequence[object],
    render: Callable[[], fragments.Piece],
    *,
    versions: tuple[str, str] | None = None,
    local: bool = True,
) -> fragments.Piece:
    """The piece ``name`` of a market page for ``vary_on``, rendered once per terms version,
    figures version, pages generation and clock bucket, and kept for every worker.

    Read the versions *before* the rows (``render`` reads them after): a change committed in
    between is then at worst kept under the old token, which no reader uses once it is bumped.
    """
    terms, prices = versions or market_versions()
    return fragments.shared_piece(
        name,
        [*vary_on, terms, prices, clock_bucket()],
        render,
        # Two buckets: a piece is never read after its bucket has passed.
        seconds=2 * FIGURES_SECONDS,
        local=local,
    )
