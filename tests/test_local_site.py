"""The zero-setup site that `make run` starts: the embedded PostgreSQL, and one cache that both
gunicorn workers share, so that a curator's change shows on every worker at once."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from django.db import connection

from tests.conftest import PASSWORD
from tests.factories import list_paper, make_paper
from tests.html import Page
from tests.processes import (
    can_sign_in_to_a_server,
    clean_environment,
    free_port,
    start_gunicorn,
    stop_process,
    wait_for,
)

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def local_env(**extra: str) -> dict[str, str]:
    """The environment of `make run`: no DATABASE_URL, no REDIS_URL, no secret key."""
    return clean_environment(**extra)


@pytest.fixture
def embedded_pgdata():
    """A data directory of its own inside the project, like `.local/pgdata`. Not pytest's
    tmp_path: the server runs as an unprivileged user, and every pytest session makes its
    temporary root private to root again, which would lock that user out mid-test."""
    parent = ROOT / ".local"
    parent.mkdir(exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix="test-pgdata-", dir=parent))
    yield path / "pgdata"
    shutil.rmtree(path, ignore_errors=True)


def test_without_database_url_the_site_runs_on_the_embedded_postgresql(embedded_pgdata):
    env = local_env(EMBEDDED_PGDATA=str(embedded_pgdata))
    script = (
        "from django.db import connection; from django.core.cache import caches; "
        "connection.ensure_connection(); print(connection.vendor); "
        'print(type(caches["default"]).__name__)'
    )
    manage = [sys.executable, "manage.py"]
    try:
        result = subprocess.run(
            [*manage, "shell", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert result.stdout.split()[-2:] == ["postgresql", "DatabaseCache"]
        assert (embedded_pgdata / "PG_VERSION").exists()
        assert not (ROOT / "db.sqlite3").exists()
    finally:
        subprocess.run([sys.executable, "-m", "peerrevenue.embedded_db", "stop"], cwd=ROOT, env=env)
    status = subprocess.run(
        [sys.executable, "-m", "peerrevenue.embedded_db", "status"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert status.stdout.strip() == "stopped"


def anonymous_pages(url: str, count: int) -> list[str]:
    """`count` fresh visits, each on a new connection, four at a time: a worker busy with one
    cannot accept the next, so both workers answer some (one after the other, the same worker
    can win every accept)."""

    def visit(_: int) -> str:
        response = requests.get(url, headers={"Connection": "close"}, timeout=10)
        assert response.status_code == 200
        return response.text

    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(visit, range(count)))


def workers_in(log: Path, path: str) -> set[str]:
    return {
        pid
        for pid, request in re.findall(r"^<(\d+)> (.*)$", log.read_text(), re.M)
        if path in request
    }


@pytest.mark.django_db(transaction=True)
def test_admin_changes_show_on_both_workers_at_once(settings, cs_dc, curator, tmp_path):
    # The workers' cache is the local site's: a table in the database both of them use.
    # (migrate made its table: papers/migrations/0011_cache_table.py)
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
        }
    }
    can_sign_in_to_a_server(settings, PASSWORD, curator)
    from market.models import Term

    quorum = Term.objects.create(phrase="quorum")
    paper = make_paper(title="Gossip protocols under churn")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 25))
    list_paper(
        make_paper(title="Byzantine quorums", abstract="Every quorum intersects."),
        category=cs_dc,
        date=dt.date(2026, 11, 25),
    )

    db = connection.settings_dict
    port = free_port()
    log = tmp_path / "access.log"
    env = local_env(DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}")
    server = start_gunicorn(env=env, port=port, log=log)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(base + "/market/rules/", timeout=60)
        before = anonymous_pages(base + "/list/cs.DC/", 24)
        assert all("Gossip protocols under churn" in page for page in before)
        assert all(f'href="/market/{quorum.slug}/"' in page for page in before)

        curator_session = requests.Session()
        login = curator_session.get(base + "/admin/login/", timeout=10)
        token = Page.parse(login.text).hidden_inputs()["csrfmiddlewaretoken"]
        curator_session.post(
            base + "/admin/login/?next=/admin/",
            data={"username": curator.username, "password": PASSWORD, "csrfmiddlewaretoken": token},
            timeout=10,
        )
        changelist = curator_session.get(base + "/admin/papers/paper/", timeout=10)
        assert changelist.status_code == 200 and "Gossip protocols" in changelist.text
        token = Page.parse(changelist.text).hidden_inputs()["csrfmiddlewaretoken"]
        hidden = curator_session.post(
            base + "/admin/papers/paper/",
            data={
                "action": "hide",
                "_selected_action": [paper.pk],
                "index": "0",
                "csrfmiddlewaretoken": token,
            },
            timeout=10,
        )
        assert "Hid 1 paper" in hidden.text
        halted = curator_session.post(
            base + "/admin/market/term/",
            data={
                "action": "halt",
                "_selected_action": [quorum.pk],
                "apply": "1",
                "reason": "Under review",
                "index": "0",
                "csrfmiddlewaretoken": token,
            },
            timeout=10,
        )
        assert "Halted 1 term" in halted.text

        # Each worker reads the page's facts from the database: none may lag at all.
        log.write_text("")
        after: list[str] = []
        # Until both workers have answered some (which one accepts is the kernel's choice).
        while len(after) < 240 and len(workers_in(log, "/list/cs.DC/")) < 2:
            after += anonymous_pages(base + "/list/cs.DC/", 24)
        assert not any("Gossip protocols under churn" in page for page in after)
        assert all("Byzantine quorums" in page for page in after)
        assert not any(f'href="/market/{quorum.slug}/"' in page for page in after)
        assert len(workers_in(log, "/list/cs.DC/")) == 2, "both workers answered"
    finally:
        stop_process(server)


def test_make_run_says_what_each_step_did_then_serves_quietly(embedded_pgdata, tmp_path):
    """`make run` (scripts/run.sh) on an empty database: a line per step with its figures, both
    workers warmed before the site is said to be up, no line per eager task, no kombu warning,
    and Ctrl-C stops the site and the embedded server."""
    port = free_port()
    output = tmp_path / "run.out"
    env = local_env(EMBEDDED_PGDATA=str(embedded_pgdata), PORT=str(port))
    with output.open("wb") as sink:
        run = subprocess.Popen(
            ["bash", "scripts/run.sh"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # Ctrl-C reaches the terminal's whole process group
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while "[5/5] serve" not in output.read_text() and run.poll() is None:
            assert time.monotonic() < deadline, output.read_text()
            time.sleep(0.5)
        text = output.read_text()
        assert run.poll() is None, text
        steps = [line for line in text.splitlines() if re.match(r"\[\d/5\] ", line)]
        # In order (an install that runs says when it starts and when it is done).
        steps_in_order = list(dict.fromkeys(line[:6] for line in steps))
        assert steps_in_order == ["[1/5] ", "[2/5] ", "[3/5] ", "[4/5] ", "[5/5] "], text
        assert re.search(r"^\[2/5\] database: .*a new cluster\) in [\d.]+ s$", text, re.M)
        applied = re.search(
            r"^\[3/5\] migrate: (\d+) migration\(s\) applied in [\d.]+ s$", text, re.M
        )
        assert applied and int(applied[1]) > 50, text
        assert re.search(
            r"^\[4/5\] sample: \d+ papers over 3 listing days .* in [\d.]+ s$", text, re.M
        )
        assert f"[5/5] serve: Peer Revenue is at {base}/ (ready in " in text

        assert requests.get(base + "/list/cs.DC/", timeout=10).status_code == 200
        robots = requests.get(base + "/robots.txt", timeout=10)
        assert robots.status_code == 200 and "Disallow: /admin/" in robots.text
        # Warmed once before the fork; then each worker says it is ready (the second may do so
        # after the first answered).
        while output.read_text().count("warmed up") < 3:
            assert time.monotonic() < deadline, output.read_text()
            time.sleep(0.2)
        text = output.read_text()
        assert "Site warmed up before the workers fork" in text
        assert "celery.app.trace" not in text and "succeeded in" not in text
        assert "No hostname was supplied" not in text
        assert " 404 " not in text and "Traceback" not in text
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)
        run.wait(timeout=60)
    status = subprocess.run(
        [sys.executable, "-m", "peerrevenue.embedded_db", "status"],
        cwd=ROOT,
        env=local_env(EMBEDDED_PGDATA=str(embedded_pgdata)),
        capture_output=True,
        text=True,
    )
    assert status.stdout.strip() == "stopped"
