"""arXiv's announcement calendar: when a listing day becomes public.

arXiv announces Sunday to Thursday at 20:00 New York time, and the feed built from that
announcement carries the next calendar day's date. The market pays dividends by this instant
(never by when our ingest happened to run), so it lives here, beside the listings it dates.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

NEW_YORK = ZoneInfo("America/New_York")
ANNOUNCEMENT_TIME = dt.time(20, 0)


def announced_at(listing_date: dt.date) -> dt.datetime:
    """The instant listing day `listing_date` was announced: 20:00 New York time the day before.

    Monday's listing was announced on Sunday evening; the result is timezone-aware (UTC).
    """
    day_before = listing_date - dt.timedelta(days=1)
    local = dt.datetime.combine(day_before, ANNOUNCEMENT_TIME, tzinfo=NEW_YORK)
    return local.astimezone(dt.UTC)
