"""`manage.py retypeset`: re-render papers typeset by an older typesetter."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.db import transaction
from django.utils import timezone
from tqdm import tqdm

from papers.models import Paper
from papers.typesetting import TYPESETTER_VERSION


class Command(BaseCommand):
    help = "Re-render the title, abstract and author names of papers typeset by an older version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--all", action="store_true", help="re-render every paper, whatever its version"
        )
        parser.add_argument("--batch-size", type=int, default=200)

    def handle(self, *args: Any, **options: Any) -> None:
        stale = Paper.objects.all()
        if not options["all"]:
            stale = stale.filter(typesetter_version__lt=TYPESETTER_VERSION)
        batch_size = max(1, int(options["batch_size"]))
        done = 0
        last_pk = 0
        with tqdm(total=stale.count(), unit="paper", file=self.stderr, disable=None) as bar:
            while True:
                # One short transaction per batch, with the rows locked: an ingest replacing a
                # paper meanwhile cannot have its new text overwritten by HTML of the old one.
                with transaction.atomic():
                    batch = list(
                        stale.select_for_update().filter(pk__gt=last_pk).order_by("pk")[:batch_size]
                    )
                    if not batch:
                        break
                    now = timezone.now()
                    for paper in batch:
                        paper.typeset()  # as Paper.save() does
                        paper.modified_at = now
                    Paper.objects.bulk_update(batch, [*Paper.TYPESET_FIELDS, "modified_at"])
                last_pk = batch[-1].pk
                done += len(batch)
                bar.update(len(batch))
        self.stdout.write(f"Re-typeset {done} papers (typesetter version {TYPESETTER_VERSION}).")
