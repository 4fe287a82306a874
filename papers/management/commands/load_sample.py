import datetime as dt
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from papers.calendar import announced_at
from papers.ingest import IngestError, ingest_category
from papers.models import Category

SAMPLE_DIR = Path(settings.BASE_DIR) / "sample"
# The demo's terms are listed this long before the first sample day was announced.
LISTED_BEFORE = dt.timedelta(days=2)


def feed_date(feed: Path) -> dt.date:
    """`cs.DC-2026-11-24.rss` → 24 November 2026, the listing day the feed holds."""
    try:
        return dt.date.fromisoformat(feed.stem.split("-", 1)[1])
    except (IndexError, ValueError):
        raise CommandError(f"{feed.name}: name it <category>-<YYYY-MM-DD>.rss.") from None


class Command(BaseCommand):
    help = (
        "Make a fresh local site look real offline: list the starter terms, then ingest the "
        "bundled sample feeds in sample/ (no network). On a local site (DJANGO_DEBUG on) demo "
        "traders trade before each sample day (load_demo_market), so the day's mentions pay "
        "dividends and the market has a history. Running it again changes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--no-demo", action="store_true", help="Leave out the demo traders and their trades."
        )

    def handle(self, *args, no_demo: bool = False, **options) -> None:
        feeds = sorted(SAMPLE_DIR.glob("*.rss"), key=lambda feed: (feed_date(feed), feed.name))
        if not feeds:
            raise CommandError(f"No sample feeds (*.rss) in {SAMPLE_DIR}.")
        demo = settings.DEBUG and not no_demo
        if not settings.DEBUG and not no_demo:
            self.stdout.write("No demo traders: DJANGO_DEBUG is off (production settings).")
        # Terms first, so that the sample days' mentions are counted as they are ingested; for
        # the demo, listed before the sample days were announced, so that they count at all.
        listed_at = announced_at(feed_date(feeds[0])) - LISTED_BEFORE
        terms = ["--listed-at", listed_at.isoformat()] if demo else []
        call_command("load_starter_terms", *terms, stdout=self.stdout)
        rounds: set[dt.date] = set()
        for feed in feeds:
            code, day = feed.name.split("-")[0], feed_date(feed)
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
                )
            except IngestError as error:
                raise CommandError(f"{feed.name}: {error}") from error
            self.stdout.write(
                f"{feed.name}: {run.items} items, {run.papers_created} new papers, "
                f"{run.listings_created} new listings"
            )
        if demo:
            call_command("load_demo_market", stdout=self.stdout)
