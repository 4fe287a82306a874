"""Current price and day change of every listed term, for the hover cards on highlighted words.

Read on every page that shows abstracts, so the whole table is one query and is cached briefly.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from django.core.cache import cache
from django.db.models import OuterRef, Subquery
from django.utils import timezone

from . import curve
from .highlighting import CACHE_KEY as TERMS_VERSION_KEY
from .models import Term, Trade
from .units import format_credits

TICKER_CACHE_SECONDS = 30


@dataclass(frozen=True, slots=True)
class Ticker:
    phrase: str
    price: int  # µ¢ for the next share
    day_change: float | None  # fraction, e.g. 0.045 for +4.5%; None when unknown

    @property
    def hover_text(self) -> str:
        text = f"{self.phrase}: {format_credits(self.price)} a share"
        if self.day_change is None:
            return text
        return f"{text}, {self.day_change:+.1%} today"


def load_tickers(*, now: dt.datetime | None = None) -> dict[int, Ticker]:
    day_ago = (now or timezone.now()) - dt.timedelta(days=1)
    # The supply a day ago is the supply after the last trade before then; no such trade means
    # no shares were out, so the price was the first share's.
    supply_then = Subquery(
        Trade.objects.filter(term=OuterRef("pk"), created_at__lte=day_ago)
        .order_by("-term_version")
        .values("supply_after")[:1]
    )
    rows = Term.objects.listed().annotate(supply_then=supply_then).values(
        "id", "phrase", "supply", "p0", "k", "supply_then"
    )
    tickers = {}
    for row in rows:
        price = curve.price(row["supply"], p0=row["p0"], k=row["k"])
        before = curve.price(row["supply_then"] or 0, p0=row["p0"], k=row["k"])
        tickers[row["id"]] = Ticker(row["phrase"], price, (price - before) / before)
    return tickers


def current_tickers() -> dict[int, Ticker]:
    key = f"market:tickers:{cache.get(TERMS_VERSION_KEY)}"
    tickers = cache.get(key)
    if tickers is None:
        tickers = load_tickers()
        cache.set(key, tickers, TICKER_CACHE_SECONDS)
    return tickers
