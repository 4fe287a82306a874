"""Current price and day change of every listed term: the hover titles on highlighted words,
the popover's table and the digests.

The table is kept (``peerrevenue.keep``) under the term-set stamp, the prices fact (the sum of
every term's stamp, which any trade moves) and a clock bucket of ``TICKER_SECONDS``, since the
day change also moves with time. A trade thus costs each process one light query of the terms'
rows (each term's supply a day ago is kept per clock bucket), and no other kept piece.
"""

from __future__ import annotations

import datetime as dt
import html
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone

from peerrevenue import keep

from .models import Term
from .stats import change_bp, supplies_at
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


def load_tickers(*, day_ago: Mapping[int, int] | None = None) -> dict[int, Ticker]:
    """Every listed term's ticker: its price from its row, its change from ``day_ago`` (each
    term's supply a day before now, ``stats.supplies_at``), read now when not given."""
    terms = Term.objects.listed()
    if day_ago is None:
        day_ago = supplies_at(terms=terms, when=timezone.now() - dt.timedelta(days=1))
    tickers = {}
    for pk, slug, phrase, p0, k, supply in terms.values_list(
        "pk", "slug", "phrase", "p0", "k", "supply"
    ):
        now, then = p0 + k * supply, p0 + k * day_ago.get(pk, 0)
        tickers[pk] = Ticker(slug, phrase, now, change_bp(now, then))
    return tickers


def clock_bucket(now: float | None = None) -> int:
    """The current ``TICKER_SECONDS`` slice of time; every process agrees on it."""
    return int((time.time() if now is None else now) // TICKER_SECONDS)


def bucket_time(bucket: int) -> dt.datetime:
    """The moment that what is kept per clock bucket is drawn at: the bucket's end, not the
    wall clock, so that a piece keyed by the bucket is the same whichever second of it made
    it (time-dependent figures are keyed by time on purpose, and only by it), and every trade
    made in the bucket is before it."""
    return dt.datetime.fromtimestamp((bucket + 1) * TICKER_SECONDS, tz=dt.UTC)


def tickers_for(facts: keep.Facts) -> dict[int, Ticker]:
    """Every listed term's ticker by id, as of the facts a request read.

    Two kept parts, so that a trade costs one light query: each term's supply a day ago,
    which moves with the clock but not with trades made now (kept per clock bucket and term
    set), and the tickers themselves, made from the terms' rows (kept per prices fact).
    """
    bucket = clock_bucket()

    def day_ago() -> dict[int, int]:
        when = bucket_time(bucket) - dt.timedelta(days=1)
        return supplies_at(terms=Term.objects.listed(), when=when)

    supplies = keep.get_or_make(
        keep.key("supplies-a-day-ago", facts["terms"], bucket), day_ago, seconds=2 * TICKER_SECONDS
    )
    return keep.get_or_make(
        keep.key("tickers", facts["terms"], facts["prices"], bucket),
        lambda: load_tickers(day_ago=supplies),
        shared=False,  # one light query: cheaper than the shared cache's round trips
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
