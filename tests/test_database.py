"""The kept database connection: a dead one is noticed before a request uses it, and a live
one is checked without sending the server a statement."""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection

from papers.models import Category

pytestmark = pytest.mark.django_db(transaction=True)


def admin_connection() -> psycopg.Connection:
    db = connection.settings_dict
    dsn = f"host={db['HOST']} port={db['PORT']} user={db['USER']} dbname={db['NAME']}"
    return psycopg.connect(dsn, autocommit=True)


def last_statement(admin: psycopg.Connection, pid: int) -> str:
    row = admin.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
    assert row is not None, f"no backend {pid}"
    return row[0]


def test_a_live_idle_connection_is_checked_without_a_statement():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'the last statement'")
    pid = connection.connection.info.backend_pid
    assert connection.is_usable()
    with admin_connection() as admin:
        assert last_statement(admin, pid) == "SELECT 'the last statement'"


def test_a_connection_the_server_closed_is_replaced_before_the_next_request_uses_it(cs_dc):
    connection.ensure_connection()
    old_pid = connection.connection.info.backend_pid
    # What a database restart or an idle timeout does to a kept connection.
    with admin_connection() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [old_pid])
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not connection.is_usable()
    # What Django does as each request starts, then the request's first query.
    connection.close_if_unusable_or_obsolete()
    assert Category.objects.filter(code="cs.DC").exists()
    assert connection.connection.info.backend_pid != old_pid
