"""Attempts at an account action (signing in, signing up, asking for a password reset),
counted in PostgreSQL while the shared cache is unreachable.

The limits on these actions stop password guessing and mail flooding, so they must hold
through a Redis outage (peerrevenue.ratelimit counts in Redis otherwise). PostgreSQL rather
than each process's memory: every gunicorn worker and every instance behind the proxy shares
it, so the limit stays the limit (per process it would be the limit times the number of
workers, and a guesser's requests are spread over all of them), and sign-in needs the
database anyway. One statement an attempt, an atomic upsert, so concurrent attempts are all
counted; only during an outage, so the table is small and mostly empty.
"""

from __future__ import annotations

import datetime as dt

from django.db import connections, models, router
from django.utils import timezone


class AttemptCount(models.Model):
    """How many attempts ``key`` (scope, identity and window) has made."""

    key = models.CharField(max_length=255, primary_key=True)
    count = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        app_label = "accounts"

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"


def count_attempt(key: str, *, window_seconds: int) -> int:
    """Count one attempt for ``key`` and return how many it has made, this one included.

    Rows of windows that have ended are deleted by the same statement, so the table holds
    no more than the current window's keys."""
    table = AttemptCount._meta.db_table
    expires = timezone.now() + dt.timedelta(seconds=window_seconds + 1)
    alias = router.db_for_write(AttemptCount)
    with connections[alias].cursor() as cursor:
        cursor.execute(
            f"""
            WITH expired AS (DELETE FROM {table} WHERE expires_at < now())
            INSERT INTO {table} AS a (key, count, expires_at) VALUES (%s, 1, %s)
            ON CONFLICT (key) DO UPDATE SET count = a.count + 1
            RETURNING a.count
            """,  # noqa: S608 - the table name is our own
            [key, expires],
        )
        return cursor.fetchone()[0]
