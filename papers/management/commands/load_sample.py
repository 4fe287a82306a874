"""``manage.py load_sample``: the bundled sample feeds (``sample/``), listed on the latest listing
days rather than the days they were saved on, so that a fresh local site looks like a live day
(the market's "1 day" and "7 days" differ, its sparklines move). The days are chosen on the
first load and kept: a later run finds them in the sample's ingest runs and changes nothing."""

import datetime as dt
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count
from django.utils import timezone

from papers.calendar import announced_at, is_listing_day, latest_listing_days
from papers.ingest import IngestError, ingest_category
from papers.models import Category, IngestRun, Listing

SAMPLE_DIR = Path(settings.BASE_DIR) / "sample"
# The demo's terms are listed this long before the first sample day was announced.
LISTED_BEFORE = dt.timedelta(days=2)


def feed_date(feed: Path) -> dt.date:
    """`cs.DC-2026-11-24.rss` → 24 November 2026, the listing day the feed holds."""
    try:
        return dt.date.fromisoformat(feed.stem.split("-", 1)[1])
    except (IndexError, ValueError):
        raise CommandError(f"{feed.name}: name it <category>-<YYYY-MM-DD>.rss.") from None


def listing_days_from(first: dt.date, count: int) -> list[dt.date]:
    days: list[dt.date] = []
    day = first
    while len(days) < count:
        if is_listing_day(day):
            days.append(day)
        day += dt.timedelta(days=1)
    return days


def sample_days(feeds: list[Path], *, now: dt.datetime) -> dict[dt.date, dt.date]:
    """Each sample day (a feed's own date) → the listing day it is listed on: the sample's days
    in order on consecutive listing days, the last of them the latest one announced by ``now``;
    or, once the sample is loaded, the days its earlier load chose."""
    saved = sorted({feed_date(feed) for feed in feeds})
    for feed in feeds:
        run = (
            IngestRun.objects.filter(
                source__endswith=f"/{SAMPLE_DIR.name}/{feed.name}",
                status=IngestRun.Status.SUCCEEDED,
                date__isnull=False,
            )
            .order_by("started_at")
            .first()
        )
        if run is not None and run.date is not None:
            # Walk back from the day this feed was listed on to where the first one went.
            back = saved.index(feed_date(feed))
            first = run.date
            while back:
                first -= dt.timedelta(days=1)
                back -= is_listing_day(first)
            return dict(zip(saved, listing_days_from(first, len(saved)), strict=True))
    return dict(zip(saved, latest_listing_days(now, len(saved)), strict=True))


class Command(BaseCommand):
    help = (
        "Make a fresh local site look real offline: list the starter terms, then ingest the "
        "bundled sample feeds in sample/ (no network), moved to end on the latest listing day. "
        "On a local site (DJANGO_DEBUG on) demo traders trade before each sample day "
        "(load_demo_market), so the day's mentions pay dividends and the market has a history. "
        "Running it again changes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--no-demo", action="store_true", help="Leave out the demo traders and their trades."
        )

    def handle(self, *args, no_demo: bool = False, **options) -> None:
        feeds = sorted(SAMPLE_DIR.glob("*.rss"), key=lambda feed: (feed_date(feed), feed.name))
        if not feeds:
            raise CommandError(f"No sample feeds (*.rss) in {SAMPLE_DIR}.")
        days = sample_days(feeds, now=timezone.now())
        demo = settings.DEBUG and not no_demo
        if not settings.DEBUG and not no_demo:
            self.stdout.write("No demo traders: DJANGO_DEBUG is off (production settings).")
        # Terms first, so that the sample days' mentions are counted as they are ingested; for
        # the demo, listed before the sample days were announced, so that they count at all.
        first_day = min(days.values())
        listed_at = announced_at(first_day) - LISTED_BEFORE
        terms = ["--listed-at", listed_at.isoformat()] if demo else []
        call_command("load_starter_terms", *terms, stdout=self.stdout)
        rounds: set[dt.date] = set()
        for feed in feeds:
            code, day = feed.name.split("-")[0], days[feed_date(feed)]
            try:
                category = Category.objects.get(code=code)
            except Category.DoesNotExist:
                raise CommandError(f"{feed.name}: unknown category {code!r}.") from None
            if demo and day not in rounds:
                # By name: papers imports nothing of the market (docs/architecture.md).
                joined = ["--joined", listed_at.isoformat()] if not rounds else []
                call_command(
                    "load_demo_market", "--before", day.isoformat(), *joined, stdout=self.stdout
                )
                rounds.add(day)
            try:
                # The sample's own API answer completes the feeds offline, as the API would:
                # dates, comments, journal references, DOIs.
                api = SAMPLE_DIR / "api" / f"{code}-sample.atom"
                run = ingest_category(
                    category=category,
                    file=feed,
                    enrich=False,
                    enrich_file=api if api.exists() else None,
                    listed_on=day,
                )
            except IngestError as error:
                raise CommandError(f"{feed.name}: {error}") from error
            self.stdout.write(
                f"{feed.name} listed on {day:%a %-d %b %Y}: {run.items} items, "
                f"{run.papers_created} new papers, {run.listings_created} new listings"
            )
        if demo:
            call_command("load_demo_market", stdout=self.stdout)
        self.stdout.write(self._summary(first_day, max(days.values()), demo=demo))

    def _summary(self, first: dt.date, last: dt.date, *, demo: bool) -> str:
        """One line for `make run`: what a visitor will find."""
        listed = Listing.objects.filter(date__range=(first, last)).aggregate(
            days=Count("date", distinct=True), papers=Count("paper", distinct=True)
        )
        return (
            f"{listed['papers']} papers over {listed['days']} listing days "
            f"({first:%-d %b} to {last:%a %-d %b}, the latest)"
            + (", traded by the demo traders" if demo else "")
        )
