from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from papers.ingest import IngestError, ingest_category
from papers.models import Category

SAMPLE_DIR = Path(settings.BASE_DIR) / "sample"


class Command(BaseCommand):
    help = (
        "Make a fresh local site look real offline: list the starter terms, then ingest the "
        "bundled sample feeds in sample/ (no network). Running it again changes nothing."
    )

    def handle(self, *args, **options) -> None:
        # Terms first, so that the sample days' mentions are counted as they are ingested.
        call_command("load_starter_terms", stdout=self.stdout)
        feeds = sorted(SAMPLE_DIR.glob("*.rss"))
        if not feeds:
            raise CommandError(f"No sample feeds (*.rss) in {SAMPLE_DIR}.")
        for feed in feeds:
            code = feed.name.split("-")[0]
            try:
                category = Category.objects.get(code=code)
            except Category.DoesNotExist:
                raise CommandError(f"{feed.name}: unknown category {code!r}.") from None
            try:
                run = ingest_category(category=category, file=feed, enrich=False)
            except IngestError as error:
                raise CommandError(f"{feed.name}: {error}") from error
            self.stdout.write(
                f"{feed.name}: {run.items} items, {run.papers_created} new papers, "
                f"{run.listings_created} new listings"
            )
