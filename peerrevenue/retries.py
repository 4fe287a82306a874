"""How a Celery task that works on the database meets a database that is briefly away (a
restart, a failover, a full pool): it runs again later, waiting longer each time, instead of
losing the work. Every such task is declared with ``@database_task(name)``, so they all take
the one policy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

from celery import Task, shared_task
from django.db import OperationalError

P = ParamSpec("P")
R = TypeVar("R")


def database_task(name: str, *, max_retries: int = 5) -> Callable[[Callable[P, R]], Task[P, R]]:
    """``shared_task`` under ``name``, retried on the database's errors with Celery's doubling
    backoff. With five retries the last waits at most 16 s (about half a minute in all), well
    inside the broker's visibility timeout: tests/papers/test_worker_crash.py checks every
    task's longest wait against it."""
    return shared_task(
        name=name, autoretry_for=(OperationalError,), retry_backoff=True, max_retries=max_retries
    )
