"""Anonymous pages answered from the second-long page cache (peerrevenue.microcache): a change
shows to anonymous readers within a second on every process, and at once to anyone signed in;
nobody with a session, messages or a write to read back is ever answered from it."""

from __future__ import annotations

import datetime as dt
import time
from types import SimpleNamespace

import pytest
import requests
from django.db import connection

from papers.models import Paper
from peerrevenue import microcache
from peerrevenue.replicas import COOKIE as WRITTEN_COOKIE
from tests.factories import list_paper, make_paper
from tests.html import page_text
from tests.processes import clean_environment, free_port, start_gunicorn, stop_process, wait_for

DAY = dt.date(2026, 11, 25)
TITLE = "Gossip protocols under churn"


@pytest.fixture
def clock(settings, monkeypatch):
    """The cache's clock, moved by hand: a second passes when the test says so."""
    settings.MICROCACHE_SECONDS = 1.0
    now = [1000.0]
    monkeypatch.setattr(microcache, "time", SimpleNamespace(monotonic=lambda: now[0]))
    microcache.forget()
    yield now
    microcache.forget()


@pytest.fixture
def paper(cs_dc):
    made = make_paper(title=TITLE)
    list_paper(made, category=cs_dc, date=DAY)
    return made


def hide(paper: Paper) -> None:
    Paper.objects.filter(pk=paper.pk).update(hidden=True)


def test_an_anonymous_reader_sees_a_change_within_the_second(
    client, clock, paper, django_assert_num_queries
):
    assert TITLE in page_text(client.get("/list/cs.DC/"))
    hide(paper)
    clock[0] += 0.9
    with django_assert_num_queries(0):  # answered before anything reads the database
        kept = client.get("/list/cs.DC/")
    assert TITLE in page_text(kept)  # a second may pass before the change shows
    assert kept["Age"] == "0"
    clock[0] += 0.1
    assert TITLE not in page_text(client.get("/list/cs.DC/"))


def test_a_signed_in_reader_sees_a_change_at_once(client, clock, paper, reader):
    client.get("/list/cs.DC/")  # kept for anonymous readers
    client.force_login(reader)
    hide(paper)
    response = client.get("/list/cs.DC/")
    assert TITLE not in page_text(response)
    assert "Age" not in response


def test_a_reader_who_just_wrote_reads_the_write_at_once(client, clock, paper):
    client.get("/list/cs.DC/")
    hide(paper)
    client.cookies[WRITTEN_COOKIE] = "anything"
    assert TITLE not in page_text(client.get("/list/cs.DC/"))


def test_each_address_is_kept_apart(client, clock, paper):
    assert client.get("/list/cs.DC/").status_code == 200
    hide(paper)
    assert TITLE not in page_text(client.get("/list/cs.DC/?from=mail"))
    assert TITLE not in page_text(client.get("/list/cs.DC/", HTTP_HOST="localhost"))
    assert client.head("/list/cs.DC/").content == b""


def test_a_page_that_sets_a_cookie_is_never_kept(client, clock, db):
    first = client.get("/accounts/login/")
    assert first.status_code == 200 and first.cookies  # the CSRF cookie of its form
    client.cookies.clear()
    again = client.get("/accounts/login/")
    assert "Age" not in again and again.cookies


def test_a_foreign_host_is_refused_with_the_page_kept(client, clock, paper, settings):
    settings.ALLOWED_HOSTS = ["peerrevenue.example"]
    assert client.get("/list/cs.DC/", HTTP_HOST="peerrevenue.example").status_code == 200
    assert client.get("/list/cs.DC/", HTTP_HOST="evil.example").status_code == 400
    assert client.get("/list/cs.DC/", HTTP_HOST="peerrevenue.example")["Age"] == "0"


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
            wait_for(base + "/market/rules/", timeout=60)
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
