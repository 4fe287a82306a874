from django.core.management.base import BaseCommand
from django.db import transaction

from market.models import Term
from market.starter_terms import STARTER_TERMS


class Command(BaseCommand):
    help = "List the starter set of cs.DC terms that are not on the market yet."

    @transaction.atomic
    def handle(self, *args, **options) -> None:
        existing = {phrase.lower() for phrase in Term.objects.values_list("phrase", flat=True)}
        created = 0
        for phrase, aliases, description in STARTER_TERMS:
            if phrase.lower() in existing:
                continue
            Term.objects.create(phrase=phrase, aliases=aliases, description=description)
            created += 1
        self.stdout.write(
            f"Listed {created} new term(s); {len(STARTER_TERMS) - created} were already there."
        )
