"""Current price and day change of every listed term: the hover titles on highlighted words,
the popover's table and the digests.

The table is kept (``peerrevenue.keep``) under the term-set stamp, the prices fact (the sum of
every term's stamp, which any trade moves) and a clock bucket of ``TICKER_SECONDS``, since the
day change also moves with time. A trade thus costs each process one reload of the table, and
no other kept piece.
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone

from peerrevenue import keep

from .models import Term
from .stats import day_changes
from .units import format_credits

TICKER_SECONDS = 30


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


def clock_bucket(now: float | None = None) -> int:
    """The current ``TICKER_SECONDS`` slice of time; every process agrees on it."""
    return int((time.time() if now is None else now) // TICKER_SECONDS)


def tickers_for(facts: keep.Facts) -> dict[int, Ticker]:
    """Every listed term's ticker by id, as of the facts a request read."""
    return keep.get_or_make(
        keep.key("tickers", facts["terms"], facts["prices"], clock_bucket()),
        load_tickers,
        seconds=2 * TICKER_SECONDS,
    )


def current_tickers(request: HttpRequest | None = None) -> dict[int, Ticker]:
    return tickers_for(keep.facts_of(request) if request is not None else keep.read(None))


def price_titles(request: HttpRequest) -> tuple[object, Callable[[str], str]]:
    """Fills the ``price`` holes of highlighted links with the term's hover text, as of the
    request's facts (the version its fills depend on)."""
    facts = keep.facts_of(request)
    version = (facts["terms"], facts["prices"], clock_bucket())
    titles: dict[str, str] = {}
    table: dict[int, Ticker] | None = None

    def fill(term_id: str) -> str:
        nonlocal table
        title = titles.get(term_id)
        if title is None:
            if table is None:
                table = tickers_for(facts)
            ticker = table.get(int(term_id)) if term_id.isdigit() else None
            title = titles[term_id] = html.escape(ticker.hover_text) if ticker else ""
        return title

    return version, fill
