"""Threads started together, for the race tests: each its own database connection, so two
writes really meet in PostgreSQL as two sessions would."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import connection


def run_threads(count: int, target: Callable[[int], Any]) -> list:
    """Run ``target(i)`` in ``count`` threads released at once by a barrier; their results in
    order. The first error any thread raised is raised again here, in the test's thread."""
    barrier = threading.Barrier(count)
    results: list = [None] * count
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            barrier.wait()
            results[i] = target(i)
        except BaseException as exc:  # surfaced below, in the test's thread
            errors.append(exc)
        finally:
            connection.close()  # each thread has its own connection; don't leak it

    threads = [threading.Thread(target=run, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return results
