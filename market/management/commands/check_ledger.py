from django.core.management.base import BaseCommand, CommandError

from market.ledger import check_ledger


class Command(BaseCommand):
    help = (
        "Verify the market's books: balanced transactions, cached balances equal to the "
        "ledger, reserves on the curve, gapless trade versions. Exits 1 on any violation."
    )

    def handle(self, *args, **options) -> None:
        report = check_ledger()
        if report.ok:
            self.stdout.write(self.style.SUCCESS(report.text()))
            return
        self.stderr.write(report.text())
        raise CommandError(f"{len(report.violations)} ledger invariant violation(s); see above.")
