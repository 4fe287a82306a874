"""`manage.py ingest cs.DC [--file PATH] [--date YYYY-MM-DD] [--enrich | --no-enrich]`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from papers import ingest
from papers.arxiv.errors import EnrichmentFailed
from papers.models import Category


def category_argument(code: str) -> Category:
    category = Category.objects.filter(code=code).first()
    if category is None:
        known = ", ".join(Category.objects.order_by("code").values_list("code", flat=True)[:8])
        raise CommandError(f"Unknown category {code!r} (known categories include {known}, …).")
    return category


def date_argument(value: str | None, *, option: str) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"{option} must be a date like 2026-11-24, not {value!r}.") from None


def enrich_argument(options: dict[str, object]) -> bool | None:
    """--enrich: True; --no-enrich: False; neither: None, the ingest's default (a fetched feed
    is completed through the API when it answers, a file is read offline)."""
    if options["enrich"]:
        return True
    return False if options["no_enrich"] else None


class Command(BaseCommand):
    help = (
        "Ingest a category's arXiv listing: today's RSS feed (completed through the arXiv API "
        "when it answers), or a saved RSS feed or API response with --file (the format is "
        "detected; offline unless --enrich)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("category", help="arXiv category code, e.g. cs.DC")
        parser.add_argument("--file", help="read this file instead of fetching the feed")
        parser.add_argument(
            "--date",
            help="announcement date (YYYY-MM-DD): dates an API response; an RSS feed must match",
        )
        enrichment = parser.add_mutually_exclusive_group()
        enrichment.add_argument(
            "--enrich",
            action="store_true",
            help="complete the entries (comments, affiliations, dates) through the arXiv API, "
            "and fail if it cannot be reached; a --file ingest is offline without it",
        )
        enrichment.add_argument(
            "--no-enrich",
            action="store_true",
            help="skip the arXiv API lookup of comments, affiliations and dates",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Check every argument before anything is written: a typo must not leave a run behind.
        category = category_argument(str(options["category"]))
        date = date_argument(options["date"], option="--date")
        file = options["file"]
        if file is not None and not Path(str(file)).is_file():
            raise CommandError(f"No such file: {file}")

        with ingest.ingest_lock(category.pk) as acquired:
            if not acquired:
                raise CommandError(f"Another ingest of {category.code} is running; try later.")
            try:
                run = ingest.ingest_category(
                    category=category,
                    file=str(file) if file is not None else None,
                    date=date,
                    enrich=enrich_argument(options),
                )
            except ingest.IngestError as exc:
                hint = ""
                if isinstance(exc, EnrichmentFailed):
                    hint = " Nothing was stored; leave out --enrich to ingest the feed as it is."
                raise CommandError(f"Ingest of {category.code} failed: {exc}{hint}") from exc

        day = run.date.isoformat() if run.date else "undated"
        self.stdout.write(
            f"{category.code} {day}: {run.items} items, {run.papers_created} papers created, "
            f"{run.papers_updated} updated, {run.listings_created} listings created."
        )
