"""Leases: one owner at a time for a named job, that outlive no dead worker and need no session.

A lease is a row (``papers.models.Lease``): a name, an owner and an expiry on the database's
clock. Each operation is ONE statement in autocommit, so nothing is held on the server between
statements: it works the same on a direct connection and through a transaction pooler, whose
next statement may run on another server connection (where a session advisory lock, the
previous ingest lock, was taken twice, released on the wrong connection and leaked for good).

- ``take`` inserts the row, or takes it over only if it has expired: two workers asking at once
  are ordered by the primary key's index, and exactly one gets it.
- While held (``held``), a thread renews it every third of its length, so a long ingest keeps it
  and a worker killed by SIGKILL loses it at most one length later.
- ``release`` deletes it only if we still own it: a holder that lost it (it stalled past its
  expiry and another took over) cannot release the new owner's lease.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection

logger = logging.getLogger(__name__)

_TAKE = """
INSERT INTO papers_lease AS lease (name, owner, taken_at, expires_at)
VALUES (%s, %s, now(), now() + %s * interval '1 second')
ON CONFLICT (name) DO UPDATE
    SET owner = EXCLUDED.owner, taken_at = EXCLUDED.taken_at, expires_at = EXCLUDED.expires_at
    WHERE lease.expires_at <= now() OR lease.owner = EXCLUDED.owner
RETURNING owner
"""
_RENEW = """
UPDATE papers_lease SET expires_at = now() + %s * interval '1 second'
WHERE name = %s AND owner = %s
"""
_RELEASE = "DELETE FROM papers_lease WHERE name = %s AND owner = %s"
_EXPIRES_IN = """
SELECT greatest(0, extract(epoch FROM expires_at - now()))::float8 FROM papers_lease
WHERE name = %s
"""


@dataclass(frozen=True)
class Lease:
    name: str
    owner: str
    seconds: float


def new_owner() -> str:
    """Who we are, readable by an operator looking at the table: host, process, and a token
    that tells two holders in one process apart."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def take(*, name: str, seconds: float, owner: str = "") -> Lease | None:
    """The lease ``name`` for ``seconds``, or None if someone else holds it unexpired.
    ``owner`` (default: a new one) may take again a lease it holds already: the same job run
    again, e.g. a task redelivered after its worker died."""
    owner = owner or new_owner()
    with connection.cursor() as cursor:
        cursor.execute(_TAKE, [name, owner, seconds])
        taken = cursor.fetchone() is not None
    return Lease(name=name, owner=owner, seconds=seconds) if taken else None


def renew(lease: Lease) -> bool:
    """Push the expiry one length from now; False if the lease is no longer ours."""
    with connection.cursor() as cursor:
        cursor.execute(_RENEW, [lease.seconds, lease.name, lease.owner])
        return cursor.rowcount == 1


def release(lease: Lease) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_RELEASE, [lease.name, lease.owner])


def expires_in(name: str) -> float | None:
    """Seconds until the current holder's lease expires (0: expired), None if nobody holds it."""
    with connection.cursor() as cursor:
        cursor.execute(_EXPIRES_IN, [name])
        row = cursor.fetchone()
    return None if row is None else float(row[0])


class _Renewer(threading.Thread):
    """Renews a lease every third of its length until stopped. Its own thread, so its own
    database connection (Django's are per thread), closed when it stops."""

    def __init__(self, lease: Lease) -> None:
        super().__init__(name=f"lease {lease.name}", daemon=True)
        self.lease = lease
        self.stopped = threading.Event()

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.lease.seconds / 3):
                try:
                    if not renew(self.lease):
                        # Stalled past the expiry and taken over: the job's writes are
                        # idempotent, so two runs cost time, not data.
                        logger.warning("Lost the lease %s to another owner", self.lease.name)
                        return
                except Exception:  # a database blip: try again at the next turn
                    logger.warning("Could not renew the lease %s", self.lease.name, exc_info=True)
                    connection.close()
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopped.set()
        self.join()


@contextmanager
def held(*, name: str, seconds: float) -> Iterator[Lease | None]:
    """Hold the lease ``name`` for the ``with`` block, renewed meanwhile; yields None (and holds
    nothing) if another owner has it. Take it outside a transaction: inside one, other
    connections cannot see the row until the transaction commits."""
    lease = take(name=name, seconds=seconds)
    if lease is None:
        yield None
        return
    renewer = _Renewer(lease)
    renewer.start()
    try:
        yield lease
    finally:
        renewer.stop()
        try:
            release(lease)
        except Exception:
            # Nothing to undo: the lease expires on its own within one length.
            logger.warning("Could not release the lease %s", name, exc_info=True)
