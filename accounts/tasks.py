"""The workers look for tasks in each app's tasks module: accounts' live with the daily
pipeline they belong to, and are imported here to be found."""

from celery import shared_task
from django.utils import timezone

from .daily import run_daily, send_digests_after_ingest
from .session_models import Session

__all__ = ["clear_expired_sessions", "run_daily", "send_digests_after_ingest"]


@shared_task
def clear_expired_sessions() -> int:
    """Delete the sessions past their expiry: nobody can use them, and each is a row."""
    deleted, _ = Session.objects.filter(expire_date__lt=timezone.now()).delete()
    return deleted
