"""/metrics is the operator's: a bearer token or a staff session; and every log line and
response names the request it belongs to."""

from __future__ import annotations

import logging
import re

import pytest

from peerrevenue import requestlog


@pytest.fixture
def token(settings):
    settings.METRICS_TOKEN = "scrape-me"
    return "scrape-me"


@pytest.mark.django_db
def test_metrics_need_the_token_or_a_staff_session(client, token, reader, curator):
    assert client.get("/metrics").status_code == 403
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    client.force_login(reader)
    assert client.get("/metrics").status_code == 403
    client.force_login(curator)
    assert client.get("/metrics").status_code == 200


@pytest.mark.django_db
def test_metrics_show_latency_by_view_ingest_runs_and_the_database(client, token, cs_dc):
    from papers.models import IngestRun

    IngestRun.objects.create(category=cs_dc, source="test", status=IngestRun.Status.FAILED)
    client.get("/market/")
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert 'peerrevenue_request_seconds_count{method="GET",view="market:index"}' in text
    assert 'peerrevenue_ingest_runs{category="cs.DC",status="failed"} 1.0' in text
    assert 'peerrevenue_database_up{alias="default"} 1.0' in text


@pytest.mark.django_db
def test_a_made_up_method_is_counted_as_other_not_as_a_series_of_its_own(client, token):
    # Each word a client sends as its method would otherwise be a series Prometheus keeps.
    def counts() -> dict[str, float]:
        text = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {token}").content.decode()
        found = re.findall(
            r'peerrevenue_request_seconds_count\{method="(\w+)",view="market:rules"\} (\S+)', text
        )
        return {method: float(value) for method, value in found}

    before = counts()  # the counts are the process's: other tests may have asked this page
    for method in ("BREW", "WHEN", "GET"):
        client.generic(method, "/market/rules/")
    after = counts()
    assert after["other"] - before.get("other", 0) == 2
    assert after["GET"] - before.get("GET", 0) == 1
    assert "BREW" not in after and "WHEN" not in after


@pytest.mark.django_db
def test_a_request_id_is_taken_from_the_proxy_or_made_and_every_log_line_names_it(client, settings):
    settings.INSTANCE_NAME = "web-1"
    logger = logging.getLogger("django.request")  # logs each 404
    seen: list[str] = []

    class Spy(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(f"{record.instance} {record.request_id}")  # type: ignore[attr-defined]

    spy = Spy()
    spy.addFilter(requestlog.RequestFilter())
    logger.addHandler(spy)
    try:
        given = client.get("/no-such-page/", HTTP_X_REQUEST_ID="haproxy-0001")
        assert given.status_code == 404 and given["X-Request-ID"] == "haproxy-0001"
        made = client.get("/market/rules/", HTTP_X_REQUEST_ID="bad id\nwith newline")
        assert made["X-Request-ID"] != "bad id\nwith newline" and len(made["X-Request-ID"]) == 32
        logger.warning("outside any request")
    finally:
        logger.removeHandler(spy)
    assert seen == ["web-1 haproxy-0001", "web-1 -"]


def test_an_empty_multiprocess_directory_leaves_no_counter_files_behind(tmp_path):
    """An operator's env file with ``PROMETHEUS_MULTIPROC_DIR=`` once made every worker write
    counter files into the working directory, and some ended up committed."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    script = (
        "import django; django.setup()\n"
        "from peerrevenue import metrics\n"
        'metrics.TRADES.labels(side="buy").inc()\n'
    )
    env = os.environ | {
        "PROMETHEUS_MULTIPROC_DIR": "",
        "DJANGO_SETTINGS_MODULE": "peerrevenue.settings",
        "PYTHONPATH": str(root),
    }
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, check=True)
    assert list(tmp_path.iterdir()) == []
