"""`manage.py import_snapshot PATH [--category cs.DC ...] [--since DATE] [--until DATE]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from papers.arxiv.errors import IngestError
from papers.history.snapshot import Progress, chosen_categories, import_snapshot
from papers.management.commands.ingest import date_argument
from papers.models import HistorySource


class Command(BaseCommand):
    help = (
        "Import papers from arXiv's metadata snapshot (JSON lines, plain or .gz): those in the "
        "categories given (default: the enabled ones), first submitted between --since and "
        "--until. Each is listed, approximately, on the day arXiv's schedule gives its first "
        "version; days the daily feed ingested are left as they are. Interrupted, the next run "
        "resumes; run again after it finished, it changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="arxiv-metadata-oai-snapshot.json, or the same .gz")
        parser.add_argument(
            "--category", action="append", dest="categories", help="a category code (repeatable)"
        )
        parser.add_argument("--since", help="first submission date, YYYY-MM-DD")
        parser.add_argument("--until", help="last submission date, YYYY-MM-DD")
        parser.add_argument(
            "--workers",
            type=int,
            help="processes that read and typeset records beside the one writing "
            "(default: one fewer than the cores; 0: read here)",
        )
        indexes = parser.add_mutually_exclusive_group()
        indexes.add_argument(
            "--rebuild-indexes",
            action="store_true",
            default=None,
            help="drop the papers' search indexes during the import and build them at its end "
            "(the default when the import brings at least 50,000 papers and more than are "
            "stored; search is slow meanwhile)",
        )
        indexes.add_argument(
            "--keep-indexes",
            action="store_false",
            dest="rebuild_indexes",
            help="never drop the papers' search indexes",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        since = date_argument(options["since"], option="--since")
        until = date_argument(options["until"], option="--until")
        if since and until and until < since:
            raise CommandError(f"--until ({until}) is before --since ({since}).")
        try:
            categories = chosen_categories(options["categories"])
        except IngestError as exc:
            raise CommandError(str(exc)) from exc
        workers = options["workers"]
        if workers is not None and workers < 0:
            raise CommandError("--workers cannot be negative.")
        with tqdm(unit="B", unit_scale=True, file=self.stderr, disable=None) as bar:

            def on_progress(progress: Progress) -> None:
                bar.total = progress.total
                bar.update(progress.done - bar.n)
                bar.set_postfix(papers=progress.source.kept, refresh=False)
                if progress.done == progress.total and progress.source.dropped_indexes:
                    bar.set_description("building the search indexes")

            try:
                source = import_snapshot(
                    path=options["path"],
                    categories=categories,
                    since=since,
                    until=until,
                    workers=workers,
                    rebuild_indexes=options["rebuild_indexes"],
                    on_progress=on_progress,
                )
            except IngestError as exc:
                raise CommandError(str(exc)) from exc
        self.stdout.write(report(source))


def report(source: HistorySource) -> str:
    lines = [
        f"{source.records} records read, {source.kept} in the chosen categories: "
        f"{source.papers_created} papers created, {source.papers_updated} updated, "
        f"{source.listings_created} listings created (approximate days)."
    ]
    if source.malformed:
        shown = ", ".join(str(where) for where in source.malformed_at)
        more = " …" if source.malformed > len(source.malformed_at) else ""
        records = "record" if source.malformed == 1 else "records"
        lines.append(f"{source.malformed} malformed {records} skipped, at: {shown}{more}")
    return "\n".join(lines)
