"""/healthz, as a load balancer sees it: cheap, 200 while the database and Redis answer, 503
saying which one is down; no session, no cookie, the site's own host names only."""

from __future__ import annotations

import pytest

from peerrevenue import health
from tests.processes import free_port

pytestmark = pytest.mark.django_db


@pytest.fixture
def fresh_client(monkeypatch):
    """Each test's Redis settings take effect: the process's client is made anew."""
    monkeypatch.setattr(health, "_redis", None)
    monkeypatch.setattr(health, "_down", set())


def test_up_is_200_with_one_query_and_no_cookie(
    client, settings, fresh_client, django_assert_num_queries
):
    with django_assert_num_queries(1):
        response = client.get("/healthz")
    assert response.status_code == 200
    expected = "ok" if settings.REDIS_URL else "not configured"
    assert response.json() == {"database": "ok", "redis": expected}
    assert response["Cache-Control"] == "no-store"
    assert not response.cookies


def test_redis_down_is_503_naming_it(client, settings, fresh_client, caplog):
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    for _ in range(3):
        response = client.get("/healthz")
        assert response.status_code == 503
        assert response.json()["database"] == "ok"
        assert response.json()["redis"].startswith("down: ")
        assert response["Retry-After"] == "1"
    # One line when it went down, not one per check; no "Service Unavailable" error log.
    assert [r.getMessage()[:30] for r in caplog.records] == ["Health check: redis is down: E"]


def test_a_host_the_site_does_not_serve_is_refused(client, fresh_client):
    assert client.get("/healthz", HTTP_HOST="elsewhere.example").status_code == 400


def test_in_production_it_answers_over_plain_http(client, settings, fresh_client):
    """The balancer asks over plain HTTP: no redirect to https."""
    settings.SECURE_SSL_REDIRECT = True
    assert client.get("/healthz").status_code == 200
    assert client.get("/market/rules/").status_code == 301


def test_static_files_never_collected_is_503_saying_what_to_run(
    client, fresh_client, monkeypatch, tmp_path
):
    """In production pages name their stylesheets through collectstatic's manifest: an
    instance started without it would answer every page with an error."""
    from django.contrib.staticfiles.storage import ManifestStaticFilesStorage

    monkeypatch.setattr(
        health, "staticfiles_storage", ManifestStaticFilesStorage(location=tmp_path)
    )
    response = client.get("/healthz")
    assert response.status_code == 503
    assert "run manage.py collectstatic" in response.json()["static"]
