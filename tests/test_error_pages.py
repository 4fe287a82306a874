"""What a reader sees when a page fails: a database that cannot be reached is a 503 that says
to try again shortly; anything else is the 500 page. (Real processes with the database really
gone: tests/test_outages.py.)"""

from __future__ import annotations

import psycopg
import pytest
from django.db import InterfaceError, OperationalError
from django.test import Client

from tests.html import page_text


@pytest.fixture
def visitor():
    # Answer as production does instead of raising the view's exception into the test.
    return Client(raise_request_exception=False)


def failing(exc: Exception):
    def fail(*args, **kwargs):
        raise exc

    return fail


@pytest.mark.django_db
@pytest.mark.parametrize(
    "exc",
    [
        OperationalError("connection failed: connection to server at 127.0.0.1 refused"),
        InterfaceError("connection already closed"),
        # Unwrapped, as a server-side cursor's close() raises it when the pooler is gone.
        psycopg.OperationalError("consuming input failed: server closed the connection"),
    ],
)
def test_a_database_outage_answers_503_with_a_human_message(visitor, monkeypatch, exc):
    monkeypatch.setattr("papers.days.read_days", failing(exc))
    response = visitor.get("/list/cs.DC/")
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "The database is briefly unavailable; try again in a moment." in page_text(response)


@pytest.mark.django_db
def test_an_error_raised_while_handling_a_lost_connection_is_a_503_too(visitor, monkeypatch):
    def fail(*args, **kwargs):
        try:
            raise OperationalError("server closed the connection unexpectedly")
        except OperationalError:
            raise RuntimeError("cleaning up after it failed too") from None

    monkeypatch.setattr("papers.days.read_days", fail)
    # "from None" hides the cause from tracebacks, not from __context__.
    assert visitor.get("/list/cs.DC/").status_code == 503


@pytest.mark.django_db
def test_any_other_failure_is_the_500_page(visitor, monkeypatch):
    monkeypatch.setattr("papers.days.read_days", failing(ValueError("a bug")))
    response = visitor.get("/list/cs.DC/")
    assert response.status_code == 500
    assert "Something went wrong" in page_text(response)
