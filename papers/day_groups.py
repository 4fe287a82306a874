"""Listings grouped under their announcement days, newest first: what a listing page shows.

Its own module because both ``papers.days`` (which reads the days a page holds) and
``papers.entries`` (which renders them, and which ``papers.days`` calls) name a ``Day``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Day:
    date: dt.date
    # Listings, or a category page's Entries: anything with a ``date``.
    listings: list[Any] = field(default_factory=list)
    replacements: list[Any] = field(default_factory=list)


def group_days(*, listings: Iterable[Any], replacements: Iterable[Any] = ()) -> list[Day]:
    """Listings (newest day first) and replacements grouped under their days, newest first."""
    days: dict[dt.date, Day] = {}
    for listing in listings:
        days.setdefault(listing.date, Day(listing.date)).listings.append(listing)
    for listing in replacements:
        days.setdefault(listing.date, Day(listing.date)).replacements.append(listing)
    return sorted(days.values(), key=lambda day: day.date, reverse=True)
