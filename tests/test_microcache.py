"""Anonymous pages answered from the second-long page cache (peerrevenue.microcache): a change
shows to anonymous readers within a second on every process, and at once to anyone signed in;
nobody with a session, messages or a write to read back is ever answered from it."""

from __future__ import annotations

import datetime as dt
import io
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest
import requests
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connection

from papers.models import Paper
from peerrevenue import microcache
from peerrevenue.replicas import COOKIE as WRITTEN_COOKIE
from peerrevenue.wsgi import application
from tests.factories import list_paper, make_paper
from tests.html import Page
from tests.processes import clean_environment, free_port, start_gunicorn, stop_process, wait_for

DAY = dt.date(2026, 11, 25)
TITLE = "Gossip protocols under churn"


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    content: bytes


def wsgi_get(path: str, *, host: str = "testserver", cookie: str = "") -> Answer:
    """``path`` asked of the site's WSGI application, as gunicorn asks it."""
    path, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "SERVER_NAME": "testserver",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_HOST": host,
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": io.StringIO(),
    }
    if cookie:
        environ["HTTP_COOKIE"] = cookie
    started: dict[str, object] = {}
    result = application(
        environ, lambda status, headers, *rest: started.update(s=status, h=headers)
    )
    try:
        content = b"".join(result)
    finally:
        getattr(result, "close", lambda: None)()
    return Answer(int(str(started["s"])[:3]), dict(started["h"]), content)  # type: ignore[call-overload]


@pytest.fixture
def clock(settings, monkeypatch):
    """The cache on, with its clock moved by hand: a second passes when the test says so. As
    Django's test client does, the requests keep the test's connection (and transaction)."""
    settings.MICROCACHE_SECONDS = 1.0
    now = [1000.0]
    monkeypatch.setattr(microcache, "time", SimpleNamespace(monotonic=lambda: now[0]))
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    microcache.forget()
    yield now
    microcache.forget()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture
def paper(cs_dc):
    made = make_paper(title=TITLE)
    list_paper(made, category=cs_dc, date=DAY)
    return made


def hide(paper: Paper) -> None:
    Paper.objects.filter(pk=paper.pk).update(hidden=True)


def shows_title(answer: Answer) -> bool:
    assert answer.status == 200
    return TITLE in Page.parse(answer.content.decode()).text


def test_an_anonymous_reader_sees_a_change_within_the_second(
    clock, paper, django_assert_num_queries
):
    first = wsgi_get("/list/cs.DC/")
    assert shows_title(first) and "Age" not in first.headers
    hide(paper)
    clock[0] += 0.9
    with django_assert_num_queries(0):  # answered before anything reads the database
        kept = wsgi_get("/list/cs.DC/")
    assert shows_title(kept)  # a second may pass before the change shows
    assert kept.headers["Age"] == "0"
    assert kept.headers["X-Request-ID"] != first.headers["X-Request-ID"]
    clock[0] += 0.1
    assert not shows_title(wsgi_get("/list/cs.DC/"))


def test_a_signed_in_reader_sees_a_change_at_once(client, clock, paper, reader):
    wsgi_get("/list/cs.DC/")  # kept for anonymous readers
    client.force_login(reader)
    cookie = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    hide(paper)
    answer = wsgi_get("/list/cs.DC/", cookie=cookie)
    assert not shows_title(answer)
    assert "Age" not in answer.headers


def test_a_reader_who_just_wrote_reads_the_write_at_once(clock, paper):
    wsgi_get("/list/cs.DC/")
    hide(paper)
    assert not shows_title(wsgi_get("/list/cs.DC/", cookie=f"{WRITTEN_COOKIE}=anything"))


def test_each_address_is_kept_apart(clock, paper):
    assert shows_title(wsgi_get("/list/cs.DC/"))
    hide(paper)
    assert not shows_title(wsgi_get("/list/cs.DC/?from=mail"))
    assert not shows_title(wsgi_get("/list/cs.DC/", host="localhost"))


def test_a_page_that_sets_a_cookie_is_never_kept(clock, db):
    for _ in range(2):
        answer = wsgi_get("/accounts/login/")  # its form's CSRF cookie
        assert answer.status == 200 and "Age" not in answer.headers


def test_a_foreign_host_is_refused_with_the_page_kept(clock, paper, settings):
    settings.ALLOWED_HOSTS = ["peerrevenue.example"]
    assert wsgi_get("/list/cs.DC/", host="peerrevenue.example").status == 200
    assert wsgi_get("/list/cs.DC/", host="evil.example").status == 400
    assert wsgi_get("/list/cs.DC/", host="peerrevenue.example").headers["Age"] == "0"


# Across processes --------------------------------------------------------------------------


def visits(base: str, count: int) -> list[requests.Response]:
    return [requests.get(base + "/list/cs.DC/", timeout=10) for _ in range(count)]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_two_instances_both_show_a_change_a_second_later(cs_dc, tmp_path):
    list_paper(make_paper(title=TITLE), category=cs_dc, date=DAY)
    db = connection.settings_dict
    env = clean_environment(
        DATABASE_URL=f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        MICROCACHE_SECONDS="1",
    )
    ports = [free_port(), free_port()]
    servers = [
        start_gunicorn(env=env, port=port, workers=1, control_socket=tmp_path / f"{port}.ctl")
        for port in ports
    ]
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for base in bases:
            wait_for(base + "/market/rules/", timeout=180)  # two instances warming at once
        # Each instance keeps the page: a burst is answered from what it rendered.
        before = [response for base in bases for response in visits(base, 5)]
        assert all(TITLE in response.text for response in before)
        assert any("Age" in response.headers for response in before)

        Paper.objects.filter(title=TITLE).update(hidden=True)  # committed: autocommit
        written = time.monotonic()
        time.sleep(max(0.0, written + 1.0 - time.monotonic()))
        after = [response for base in bases for response in visits(base, 5)]
        assert not any(TITLE in response.text for response in after)
    finally:
        for server in servers:
            stop_process(server)
