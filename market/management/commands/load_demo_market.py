import datetime as dt

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from market import demo

REFUSAL = (
    "The demo market makes up traders and trades: it is for a local site only, and "
    "DJANGO_DEBUG is off here (production settings). Pass --force if this really is a "
    "throwaway database."
)


class Command(BaseCommand):
    help = (
        "Local sites only: demo traders (marked as demo) trade one round. With --before DATE "
        "the round is dated in the hours before that listing day's announcement, so that "
        "ingesting the day next pays its dividends by the one rule (load_sample does this for "
        "each sample day); without, the round trades now. Running a round again changes nothing."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--before",
            type=dt.date.fromisoformat,
            help="The listing day (YYYY-MM-DD) whose announcement the round precedes.",
        )
        parser.add_argument(
            "--joined",
            type=dt.datetime.fromisoformat,
            help="Date the demo traders' accounts and grants at this moment (ISO, with zone).",
        )
        parser.add_argument("--force", action="store_true", help="Run even with DJANGO_DEBUG off.")

    def handle(self, *args, before: dt.date | None, joined, force: bool, **options) -> None:
        if not settings.DEBUG and not force:
            raise CommandError(REFUSAL)
        if joined is not None:
            if joined.tzinfo is None:
                raise CommandError("--joined needs a time zone, e.g. 2026-11-20T12:00:00+00:00.")
            demo.backdate_accounts(users=demo.demo_users(), at=joined)
        label = before.isoformat() if before else "live"
        ends_at = demo.round_before(before) if before else None
        result = demo.play_round(label=label, ends_at=ends_at)
        when = f"before {label}'s announcement" if before else "now"
        self.stdout.write(
            f"Demo round {when}: {result.placed} trade(s) placed, {result.repeated} already there."
        )
