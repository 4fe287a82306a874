"""Database helpers shared by the apps: retrying a transaction that lost a race, and inserting
many rows at once.

Nothing here knows about papers or money; the market's writes and the ingest's use these.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from typing import TypeVar

import psycopg
import psycopg.errors
from django.db import IntegrityError, OperationalError, connection, models, transaction
from django.db.backends.base.base import BaseDatabaseWrapper

logger = logging.getLogger(__name__)

T = TypeVar("T")

MAX_ATTEMPTS = 6
BACKOFF_BASE_SECONDS = 0.005
BACKOFF_CAP_SECONDS = 0.25

_retry_lock = threading.Lock()
_retries = 0


def retry_count() -> int:
    """Transactions retried (serialization failure or deadlock) by this process so far."""
    return _retries


def is_retryable(exc: OperationalError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, psycopg.errors.SerializationFailure | psycopg.errors.DeadlockDetected)


def violates(exc: IntegrityError, constraint: str) -> bool:
    """Whether ``exc`` was raised by the named database constraint."""
    diag = getattr(exc.__cause__, "diag", None)
    return getattr(diag, "constraint_name", None) == constraint


def atomic_with_retries(work: Callable[[], T], *, statement: bool = False) -> T:
    """Run ``work`` in one transaction, retrying on serialization failure or deadlock with
    bounded, jittered exponential backoff.

    ``statement=True`` says ``work`` is a single SQL statement: outside a transaction it then
    runs in autocommit mode, where the statement is its own transaction and BEGIN and COMMIT
    cost no round trips of their own.
    """
    global _retries
    if connection.in_atomic_block:
        # The caller owns the transaction; replaying only our part of it would be wrong, so run
        # once in a savepoint and let the caller's own retry policy (if any) handle failures.
        with transaction.atomic():
            return work()
    for attempt in range(1, MAX_ATTEMPTS + 1):
        try:
            if statement:
                return work()
            with transaction.atomic():
                return work()
        except OperationalError as exc:
            if attempt == MAX_ATTEMPTS or not is_retryable(exc):
                raise
            with _retry_lock:
                _retries += 1
            delay = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt)
            logger.info("Retrying transaction after %s (attempt %d)", exc, attempt)
            time.sleep(random.uniform(0, delay))  # full jitter: colliding retries spread out
    raise AssertionError("unreachable")


# What a constant column of insert_unnest may hold (a datetime is a date).
Constant = int | str | date | None


def may_prepare(using: BaseDatabaseWrapper | None = None) -> bool:
    """Whether statements may be prepared on the server: not with ``DATABASE_PREPARE_THRESHOLD``
    empty (the default behind a transaction pooler, where the next statement may reach a server
    connection that never saw the PREPARE: "prepared statement "_pg3_0" does not exist")."""
    return (using or connection).settings_dict["OPTIONS"].get("prepare_threshold") is not None


def prepared_row(
    sql: str, params: Sequence[object], *, using: BaseDatabaseWrapper | None = None
) -> tuple | None:
    """One row of a fixed statement on Django's connection (or ``using``; in its transaction,
    if any), prepared where the connection may keep one (``may_prepare``), else bound on the
    server without a name, which any pooler passes through. Django's cursors bind parameters on
    the client, so Postgres would parse and plan the statement afresh each time; a
    server-side-binding psycopg cursor lets it keep the plan. Errors are wrapped as Django
    wraps them."""
    using = using or connection
    using.close_if_health_check_failed()
    using.ensure_connection()
    with using.wrap_database_errors, psycopg.Cursor(using.connection) as cursor:
        cursor.execute(sql, params, prepare=may_prepare(using))
        return cursor.fetchone()


def prepared_rows(
    sql: str, params: Sequence[object] | Mapping[str, object], *, using: BaseDatabaseWrapper
) -> list[tuple]:
    """Every row of a fixed statement, prepared as ``prepared_row`` prepares one, and counted
    in the connection's query log like any Django query (tests' query budgets see it). For a
    page's few statements of several subqueries, whose planning costs more than their run."""
    using.close_if_health_check_failed()
    using.ensure_connection()
    started = time.monotonic()
    with using.wrap_database_errors, psycopg.Cursor(using.connection) as cursor:
        cursor.execute(sql, params, prepare=may_prepare(using))
        rows = cursor.fetchall()
    if using.queries_logged:
        using.queries_log.append(
            {"sql": f"{sql} -- {params}", "time": f"{time.monotonic() - started:.3f}"}
        )
    return rows


def insert_unnest(
    model: type[models.Model],
    *,
    arrays: Mapping[str, Sequence[Constant]],
    constants: Mapping[str, Constant] | None = None,
    unique: Sequence[str] = (),
) -> None:
    """Insert one row per position of the equal-length ``arrays`` (field name → values, each
    cast to an array of its column's type),
    each row also taking the ``constants`` (field name → value), in ONE statement:
    ``INSERT … SELECT FROM unnest(…)``.

    A busy day writes ten thousand rows; building and quoting as many model instances would
    cost more than the insert itself. ``unique`` names the fields of a unique constraint: rows
    that would break it are skipped (``ON CONFLICT DO NOTHING``), so a re-run inserts nothing.
    """
    constants = dict(constants or {})
    if not arrays or not len(next(iter(arrays.values()))):
        return
    meta = model._meta
    quote = connection.ops.quote_name

    def field_of(name: str) -> models.Field:
        field = meta.get_field(name)
        if not isinstance(field, models.Field) or field.column is None:
            raise ValueError(f"{model.__name__}.{name} is not a column")
        return field

    def column(name: str) -> str:
        return quote(field_of(name).column)

    def array_type(name: str) -> str:
        # A foreign key's column is its target's key: bigint here, as every key of the site.
        field = field_of(name)
        return "bigint" if field.is_relation else field.db_type(connection) or "bigint"

    names = [*arrays, *constants]
    aliases = [f"a{i}" for i in range(len(arrays))]
    selected = aliases + ["%s"] * len(constants)
    sql = (
        f"INSERT INTO {quote(meta.db_table)} ({', '.join(column(n) for n in names)}) "
        f"SELECT {', '.join(selected)} "
        f"FROM unnest({', '.join(f'%s::{array_type(n)}[]' for n in arrays)}) "
        f"AS rows({', '.join(aliases)})"
    )
    if unique:
        sql += f" ON CONFLICT ({', '.join(column(n) for n in unique)}) DO NOTHING"
    # Parameters in the order of the placeholders: the SELECT list's constants come first.
    params: list[Constant | list[int] | list[Constant]] = [
        *constants.values(),
        *(list(values) for values in arrays.values()),
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
