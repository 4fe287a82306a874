"""The workers look for tasks in each app's tasks module: accounts' live with the daily
pipeline they belong to, and are imported here to be found."""

from .daily import run_daily, send_digests_after_ingest

__all__ = ["run_daily", "send_digests_after_ingest"]
