import datetime as dt

from celery import shared_task

# The daily pipeline's tasks live with the pipeline; importing them here registers them with
# the workers, which look for tasks in each app's tasks module.
from .daily import run_daily, send_digests_after_ingest
from .digest import send_daily_digests

__all__ = ["run_daily", "send_digests", "send_digests_after_ingest"]


@shared_task(acks_late=True)
def send_digests(date_iso: str) -> int:
    return send_daily_digests(date=dt.date.fromisoformat(date_iso))
