"""`manage.py backfill cs.DC --since YYYY-MM-DD [--until YYYY-MM-DD]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from papers import backfills, ingest
from papers.management.commands.ingest import category_argument, date_argument


class Command(BaseCommand):
    help = (
        "Load a category's past listings from the arXiv API: papers submitted between --since "
        "and --until (inclusive), each listed on the day arXiv's schedule announced it. "
        "Pages are fetched one request per ARXIV_API_DELAY_SECONDS."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("category", help="arXiv category code, e.g. cs.DC")
        parser.add_argument("--since", required=True, help="first submission date, YYYY-MM-DD")
        parser.add_argument("--until", help="last submission date, YYYY-MM-DD (default: today)")
        parser.add_argument("--page-size", type=int, default=100, help="results per API page")

    def handle(self, *args: Any, **options: Any) -> None:
        category = category_argument(str(options["category"]))
        since = date_argument(str(options["since"]), option="--since")
        until = date_argument(options["until"], option="--until")
        page_size = int(options["page_size"])
        if since is None:
            raise CommandError("--since is required.")
        if until is not None and until < since:
            raise CommandError(f"--until ({until}) is before --since ({since}).")
        if not 1 <= page_size <= 2000:
            raise CommandError("--page-size must be between 1 and 2000 (the API's limit).")

        with (
            ingest.ingest_lock(category.pk) as acquired,
            tqdm(unit="paper", desc=category.code, file=self.stderr, disable=None) as bar,
        ):
            if not acquired:
                raise CommandError(f"Another ingest of {category.code} is running; try later.")

            def on_page(done: int, total: int) -> None:
                bar.total = total
                bar.update(done - bar.n)

            try:
                runs = backfills.backfill(
                    category=category,
                    since=since,
                    until=until,
                    page_size=page_size,
                    on_page=on_page,
                )
            except ingest.IngestError as exc:
                raise CommandError(f"Backfill of {category.code} failed: {exc}") from exc

        papers = sum(run.items for run in runs)
        created = sum(run.papers_created for run in runs)
        listings = sum(run.listings_created for run in runs)
        self.stdout.write(
            f"{category.code}: {papers} papers over {len(runs)} announcement days, "
            f"{created} papers created, {listings} listings created."
        )
