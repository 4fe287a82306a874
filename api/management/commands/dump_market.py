import datetime as dt

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from api.dumps import dumps_dir, make_dumps


class Command(BaseCommand):
    help = (
        "Write the market's dumps (trades, prices, dividends; gzip JSON Lines) up to a UTC day, "
        "as the nightly task does, and list them with their sizes and SHA-256."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--day", help="YYYY-MM-DD (default: yesterday, UTC)")

    def handle(self, *args, day: str | None = None, **options) -> None:
        try:
            when = (
                dt.date.fromisoformat(day) if day else timezone.now().date() - dt.timedelta(days=1)
            )
        except ValueError:
            raise CommandError(f"--day must be a date like 2026-11-03 (got {day!r}).") from None
        for dump in make_dumps(day=when):
            self.stdout.write(
                f"{dumps_dir() / dump.file_name}  {dump.rows} rows  {dump.size} bytes  "
                f"sha256 {dump.sha256}"
            )
