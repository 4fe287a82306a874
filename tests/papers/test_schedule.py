"""arXiv's announcement schedule: which listing date a submission lands on."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from papers.calendar import (
    announcement_date_for,
    is_listing_day,
    latest_listing_days,
    submission_deadline,
    submission_period_start,
)

NY = ZoneInfo("America/New_York")

# November 2026: Mon 23, Tue 24, Wed 25, Thu 26, Fri 27, Sat 28, Sun 29, Mon 30; Tue 1 Dec.
CASES = [
    # submitted (New York)   listing date      why
    ("2026-11-23 10:00", "2026-11-24"),  # Mon before the 14:00 deadline → announced Mon 20:00
    ("2026-11-23 13:59", "2026-11-24"),  # one minute before the deadline
    ("2026-11-23 14:00", "2026-11-25"),  # at the deadline: the next day's batch
    ("2026-11-23 23:30", "2026-11-25"),
    ("2026-11-25 09:00", "2026-11-26"),  # Wed → Thu
    ("2026-11-26 13:00", "2026-11-27"),  # Thu before the deadline → announced Thu → Friday
    ("2026-11-26 15:00", "2026-11-30"),  # Thu after → Fri's batch, announced Sun → Monday
    ("2026-11-27 10:00", "2026-11-30"),  # Fri before → announced Sunday 20:00 → Monday
    ("2026-11-27 15:00", "2026-12-01"),  # Fri after → Monday's deadline → Tuesday
    ("2026-11-28 12:00", "2026-12-01"),  # Saturday → Monday's deadline → Tuesday
    ("2026-11-29 21:00", "2026-12-01"),  # Sunday evening, too
    ("2026-11-30 00:05", "2026-12-01"),  # just after midnight Monday
    ("2026-12-31 16:00", "2027-01-04"),  # Thu after the deadline, across a year (holidays ignored)
]


@pytest.mark.parametrize(("submitted", "listed"), CASES)
def test_announcement_date_for(submitted, listed):
    moment = dt.datetime.fromisoformat(submitted).replace(tzinfo=NY)
    assert announcement_date_for(moment) == dt.date.fromisoformat(listed)


def test_converts_utc_to_new_york_time_first():
    # 18:30 UTC on a Monday in November is 13:30 in New York (EST): before the deadline.
    assert announcement_date_for(dt.datetime(2026, 11, 23, 18, 30, tzinfo=dt.UTC)) == dt.date(
        2026, 11, 24
    )
    # 19:30 UTC is 14:30 in New York: after it.
    assert announcement_date_for(dt.datetime(2026, 11, 23, 19, 30, tzinfo=dt.UTC)) == dt.date(
        2026, 11, 25
    )
    # In summer (EDT, UTC-4) 17:30 UTC is 13:30 New York: still before.
    assert announcement_date_for(dt.datetime(2026, 7, 6, 17, 30, tzinfo=dt.UTC)) == dt.date(
        2026, 7, 7
    )


def test_listing_dates_are_always_weekdays():
    start = dt.datetime(2026, 11, 1, tzinfo=NY)
    for hour in range(0, 24 * 60, 1):
        listed = announcement_date_for(start + dt.timedelta(hours=hour))
        assert listed.weekday() < 5


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError, match="timezone-aware"):
        announcement_date_for(dt.datetime(2026, 11, 23, 10, 0))


# The latest listing days announced by a moment (the bundled sample is moved onto them).
LATEST = [
    # now (New York)        the three latest listing days, oldest first
    ("2026-12-02 19:59", ["2026-11-30", "2026-12-01", "2026-12-02"]),  # Thu's not yet out
    ("2026-12-02 20:00", ["2026-12-01", "2026-12-02", "2026-12-03"]),
    # Thanksgiving Thu 26 Nov: no announcement that evening, so no listing on Friday 27.
    ("2026-11-29 12:00", ["2026-11-24", "2026-11-25", "2026-11-26"]),
    ("2026-11-29 20:30", ["2026-11-25", "2026-11-26", "2026-11-30"]),  # Sunday → Monday's
    ("2027-01-02 10:00", ["2026-12-30", "2026-12-31", "2027-01-01"]),  # a Saturday
]


@pytest.mark.parametrize(("now", "expected"), LATEST)
def test_latest_listing_days(now, expected):
    moment = dt.datetime.fromisoformat(now).replace(tzinfo=NY)
    days = latest_listing_days(moment, 3)
    assert [day.isoformat() for day in days] == expected
    assert all(is_listing_day(day) for day in days)


# Listing day → (the period's first instant, its deadline), New York time. Thanksgiving 2026 is
# Thursday 26 November: no announcement that evening, so no deadline that afternoon either.
PERIODS = [
    ("2026-11-24", "2026-11-20 14:00", "2026-11-23 14:00"),  # Tuesday: Friday to Monday
    ("2026-11-25", "2026-11-23 14:00", "2026-11-24 14:00"),  # Wednesday: Monday to Tuesday
    ("2026-11-30", "2026-11-25 14:00", "2026-11-27 14:00"),  # Monday after Thanksgiving
    ("2026-12-01", "2026-11-27 14:00", "2026-11-30 14:00"),
    ("2027-01-04", "2026-12-30 14:00", "2026-12-31 14:00"),  # New Year's Day is a holiday
]


@pytest.mark.parametrize(("listed", "opens", "closes"), PERIODS)
def test_a_listing_days_submission_period(listed, opens, closes):
    day = dt.date.fromisoformat(listed)
    assert submission_period_start(day) == dt.datetime.fromisoformat(opens).replace(tzinfo=NY)
    assert submission_deadline(day) == dt.datetime.fromisoformat(closes).replace(tzinfo=NY)


def test_the_period_holds_exactly_what_the_schedule_lists_that_day():
    """Every half hour of five weeks around Thanksgiving and New Year: a submission lands on
    listing day D (holidays kept) exactly when it falls in D's period, so the window opened at
    the period's start never misses a paper's true submission."""
    moment = dt.datetime(2026, 11, 16, 0, 0, tzinfo=NY)
    while moment < dt.datetime(2027, 1, 12, tzinfo=NY):
        listed = announcement_date_for(moment, holidays=True)
        assert submission_period_start(listed) <= moment < submission_deadline(listed), moment
        moment += dt.timedelta(minutes=30)
