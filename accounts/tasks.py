import datetime as dt

from celery import shared_task

from .digest import send_daily_digests


@shared_task(acks_late=True)
def send_digests(date_iso: str) -> int:
    return send_daily_digests(date=dt.date.fromisoformat(date_iso))
