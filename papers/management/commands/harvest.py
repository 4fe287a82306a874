"""`manage.py harvest [--set cs] [--from DATE] [--until DATE] [--category cs.DC ...]`."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from papers import leases
from papers.arxiv.errors import IngestError
from papers.history.oai import PageDone, harvest
from papers.history.snapshot import chosen_categories
from papers.management.commands.import_snapshot import report
from papers.management.commands.ingest import date_argument
from papers.models import Category


class Command(BaseCommand):
    help = (
        "Harvest arXiv's history over OAI-PMH (ARXIV_OAI_URL, ListRecords in arXivRaw) into the "
        "categories given (default: the set's enabled ones). Without --from it is incremental: "
        "it goes on with an interrupted harvest, or asks for what changed since the last one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--set", default="cs", dest="set_spec", help="OAI set, e.g. cs")
        parser.add_argument("--from", dest="from_date", help="first datestamp, YYYY-MM-DD")
        parser.add_argument("--until", help="last datestamp, YYYY-MM-DD")
        parser.add_argument(
            "--category", action="append", dest="categories", help="a category code (repeatable)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        set_spec = str(options["set_spec"]).strip()
        from_date = date_argument(options["from_date"], option="--from")
        until = date_argument(options["until"], option="--until")
        if from_date and until and until < from_date:
            raise CommandError(f"--until ({until}) is before --from ({from_date}).")
        try:
            if options["categories"]:
                categories = chosen_categories(options["categories"])
            else:
                categories = list(
                    Category.objects.filter(ingest_enabled=True, archive_code=set_spec)
                )
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        if not categories:
            raise CommandError(f"No enabled category is in the set {set_spec!r}: use --category.")
        with (
            leases.held(name=f"harvest:{set_spec}", seconds=settings.INGEST_LEASE_SECONDS) as held,
            tqdm(unit="record", desc=set_spec, file=self.stderr, disable=None) as bar,
        ):
            if held is None:
                raise CommandError(f"Another harvest of {set_spec} is running; try later.")

            def on_page(done: PageDone) -> None:
                bar.update(done.records)
                bar.set_postfix(papers=done.source.kept, refresh=False)

            try:
                source = harvest(
                    set_spec=set_spec,
                    categories=categories,
                    from_date=from_date,
                    until=until,
                    on_page=on_page,
                )
            except IngestError as exc:
                raise CommandError(f"Harvest of {set_spec} stopped: {exc}") from exc
        self.stdout.write(report(source))
        if source.harvested_through:
            self.stdout.write(f"The next harvest asks from {source.harvested_through}.")
