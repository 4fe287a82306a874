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
SUBMISSION_DEADLINE = dt.time(14, 0)


def announced_at(listing_date: dt.date) -> dt.datetime:
    """The instant listing day `listing_date` was announced: 20:00 New York time the day before.

    Monday's listing was announced on Sunday evening; the result is timezone-aware (UTC).
    """
    day_before = listing_date - dt.timedelta(days=1)
    local = dt.datetime.combine(day_before, ANNOUNCEMENT_TIME, tzinfo=NEW_YORK)
    return local.astimezone(dt.UTC)


def _working_day_before(day: dt.date) -> dt.date:
    """The weekday before ``day`` on which arXiv works (not a weekend, not a holiday)."""
    day -= dt.timedelta(days=1)
    while day.weekday() >= 5 or is_holiday(day):
        day -= dt.timedelta(days=1)
    return day


def submission_deadline(listing_date: dt.date) -> dt.datetime:
    """The 14:00 New York deadline that closed the submissions listed on ``listing_date``: the
    working day before it (Friday for Monday), holidays kept. UTC."""
    day = _working_day_before(listing_date)
    return dt.datetime.combine(day, SUBMISSION_DEADLINE, tzinfo=NEW_YORK).astimezone(dt.UTC)


def submission_period_start(listing_date: dt.date) -> dt.datetime:
    """When the submissions listed on ``listing_date`` began: the deadline before the one that
    closed them (Monday's listing: Thursday 14:00 to Friday 14:00; Tuesday's: Friday to
    Monday), holidays kept, so a paper listed that day was submitted at or after it. UTC.

    The market's submission window (market/windows.py) opens here for a paper whose source
    gave no submission time.
    """
    day = _working_day_before(_working_day_before(listing_date))
    return dt.datetime.combine(day, SUBMISSION_DEADLINE, tzinfo=NEW_YORK).astimezone(dt.UTC)


def announcement_date_for(submitted_at: dt.datetime, *, holidays: bool = False) -> dt.date:
    """The date of the listing that announces a submission made at `submitted_at`.

    arXiv's schedule (New York time): submissions close at 14:00 Monday to Friday; what came in
    before a deadline is announced at 20:00 that day, except that Friday's batch is announced on
    Sunday at 20:00; the feed built from an announcement is dated the next day. So a submission
    is listed on the weekday after its deadline day: Monday 10:00 → Tuesday, Thursday 13:00 →
    Friday, Friday 10:00 → Monday, Friday 15:00 → (Monday's deadline) → Tuesday.

    With ``holidays``, a weekday on which arXiv makes no announcement (``is_holiday``) has no
    deadline either: its submissions wait for the next working day's. Without (the API
    backfill's way), the few listings around holidays get a date a day or two early.
    """
    if submitted_at.tzinfo is None:
        raise ValueError("submitted_at must be timezone-aware")
    local = submitted_at.astimezone(NEW_YORK)
    deadline_day = local.date()
    if local.weekday() < 5 and local.time() >= SUBMISSION_DEADLINE:
        deadline_day += dt.timedelta(days=1)
    # Weekend submissions wait for Monday's deadline, a holiday's for the next working day's.
    while deadline_day.weekday() >= 5 or (holidays and is_holiday(deadline_day)):
        deadline_day += dt.timedelta(days=1)
    listing_day = deadline_day + dt.timedelta(days=1)
    while listing_day.weekday() >= 5:  # Friday's batch (announced Sunday) is dated Monday
        listing_day += dt.timedelta(days=1)
    return listing_day


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    first = dt.date(year, month, 1)
    return first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))


def is_holiday(day: dt.date) -> bool:
    """Whether arXiv makes no announcement on the evening of ``day`` (a weekday).

    arXiv publishes each year's holiday schedule; the days it has kept year after year are
    New Year's Day, Thanksgiving (the fourth Thursday of November) and Christmas Day, with
    the days next to them varying. Those three are what bulk history derives days by: a
    listing near another holiday is approximate, as every derived listing is.
    """
    return (day.month, day.day) in {(1, 1), (12, 25)} or day == _nth_weekday(day.year, 11, 3, 4)


def is_listing_day(day: dt.date) -> bool:
    """Whether arXiv lists papers on ``day``: a weekday whose announcement evening (the day
    before; Sunday for Monday) is not a holiday."""
    evening = day - dt.timedelta(days=1)
    return day.weekday() < 5 and not (evening.weekday() < 5 and is_holiday(evening))


def latest_listing_days(now: dt.datetime, count: int) -> list[dt.date]:
    """The ``count`` most recent listing days announced by ``now``, oldest first: at 21:00 New
    York on a Tuesday the last is Wednesday's, announced an hour before."""
    day = now.astimezone(NEW_YORK).date() + dt.timedelta(days=1)
    days: list[dt.date] = []
    while len(days) < count:
        if is_listing_day(day) and announced_at(day) <= now:
            days.append(day)
        day -= dt.timedelta(days=1)
    return days[::-1]
