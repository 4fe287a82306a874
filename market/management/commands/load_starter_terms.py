import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from market.models import Term
from market.starter_terms import STARTER_TERMS


class Command(BaseCommand):
    help = "List the starter set of cs.DC terms that are not on the market yet."

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--listed-at",
            type=dt.datetime.fromisoformat,
            help="Local samples only: date the new terms' listing at this moment (ISO, with "
            "zone), so that sample days announced after it count their mentions.",
        )

    @transaction.atomic
    def handle(self, *args, listed_at: dt.datetime | None = None, **options) -> None:
        if listed_at is not None and listed_at.tzinfo is None:
            raise CommandError("--listed-at needs a time zone, e.g. 2026-11-20T12:00:00+00:00.")
        existing = {phrase.lower() for phrase in Term.objects.values_list("phrase", flat=True)}
        created = []
        for phrase, aliases, description in STARTER_TERMS:
            if phrase.lower() in existing:
                continue
            created.append(
                Term.objects.create(phrase=phrase, aliases=aliases, description=description).pk
            )
        if listed_at is not None and created:
            # Only the terms made here, before anyone could trade them; a price chart starts
            # at the term's creation, so it moves with the listing.
            Term.objects.filter(pk__in=created).update(listed_at=listed_at, created_at=listed_at)
        self.stdout.write(
            f"Listed {len(created)} new term(s); {len(STARTER_TERMS) - len(created)} were "
            "already there."
        )
