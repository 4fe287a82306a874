"""Sessions: one statement reads a reader's session, who they are and whether they have news."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import Session
from market.models import Notice
from tests.html import Page

pytestmark = pytest.mark.django_db

RULES = "/market/rules/"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_signed_in_page_reads_the_session_and_its_reader_in_one_query(reader):
    client = signed_in(reader)
    with CaptureQueriesContext(connection) as queries:
        page = Page.of(client.get(RULES))
    assert reader.username in page.text
    # The rules page reads nothing of its own: the one statement is the session's.
    assert len(queries) == 1, [query["sql"] for query in queries]
    assert "accounts_session" in queries[0]["sql"]


def test_a_session_names_its_user(reader):
    client = signed_in(reader)
    assert Session.objects.get(session_key=client.cookies["sessionid"].value).user == reader


def test_a_notice_written_behind_the_sites_back_shows_on_the_next_page_once(trader):
    client = signed_in(trader)
    client.get(RULES)
    # Written as the database's own triggers write notices: nobody raises a flag.
    Notice.objects.create(user=trader, kind=Notice.Kind.ORDER, text="Your order was filled.")
    assert "Your order was filled." in Page.of(client.get(RULES)).text
    assert "Your order was filled." not in Page.of(client.get(RULES)).text


def test_a_flushed_cache_signs_nobody_out(reader):
    client = signed_in(reader)
    cache.clear()
    assert reader.username in Page.of(client.get(RULES)).text


def test_a_password_changed_elsewhere_signs_the_session_out(reader):
    client = signed_in(reader)
    type(reader).objects.filter(pk=reader.pk).update(password=make_password("another one"))
    page = Page.of(client.get(RULES))
    assert reader.username not in page.text
    assert "Log in" in page.text


def test_logging_out_ends_the_session_everywhere_it_was_sent(reader):
    client = signed_in(reader)
    stolen = client.cookies["sessionid"].value
    client.post("/accounts/logout/")
    assert not Session.objects.filter(session_key=stolen).exists()
    replay = Client()
    replay.cookies["sessionid"] = stolen
    assert reader.username not in Page.of(replay.get(RULES)).text


def test_sessions_from_before_the_move_are_kept_signed_in(reader):
    old = DjangoStore()
    old[SESSION_KEY] = str(reader.pk)
    old[BACKEND_SESSION_KEY] = "accounts.backends.UserBackend"
    old[HASH_SESSION_KEY] = reader.get_session_auth_hash()
    old.create()
    migration = importlib.import_module("accounts.migrations.0005_sessions_with_their_user")
    with connection.schema_editor() as editor:
        migration.copy_sessions(apps, editor)

    assert Session.objects.get(session_key=old.session_key).user == reader
    client = Client()
    client.cookies["sessionid"] = old.session_key or ""
    assert reader.username in Page.of(client.get(RULES)).text


def test_expired_sessions_are_cleared_and_live_ones_kept(reader, trader):
    from datetime import timedelta

    from django.utils import timezone

    from accounts.tasks import clear_expired_sessions

    signed_in(reader)
    signed_in(trader)
    Session.objects.filter(user=trader).update(expire_date=timezone.now() - timedelta(days=1))
    assert clear_expired_sessions() == 1
    assert list(Session.objects.values_list("user", flat=True)) == [reader.pk]


def test_a_category_page_reads_the_session_with_its_facts_in_one_statement(cs_dc, reader):
    cs_dc.toggle_watch(reader)
    client = signed_in(reader)
    with CaptureQueriesContext(connection) as queries:
        page = Page.of(client.get("/list/cs.DC/"))
    assert reader.username in page.text
    assert page.one("button", cls="button--watch").text == "Unwatch"
    assert page.one("span", cls="watch-form__count").text == "1 watcher"
    # One statement: the session, its reader, and the facts the page is kept by (the
    # category's stamp, its watchers, whether this reader is one of them).
    first, *rest = [query["sql"] for query in queries.captured_queries]
    assert "accounts_session" in first and "papers_watch" in first, first
    assert not any("accounts_session" in sql for sql in rest)


def test_facts_about_the_reader_are_of_whom_django_signs_in(cs_dc, reader, rf):
    """A live session of a reader since deactivated: the statement read their watch with the
    session, but Django signs nobody in, so the facts about "the reader" are read again."""
    from django.contrib.auth.middleware import AuthenticationMiddleware
    from django.contrib.sessions.middleware import SessionMiddleware
    from django.http import HttpResponse

    from peerrevenue import keep

    cs_dc.toggle_watch(reader)
    session = signed_in(reader).cookies["sessionid"].value
    type(reader).objects.filter(pk=reader.pk).update(is_active=False)
    request = rf.get("/list/cs.DC/")
    request.COOKIES["sessionid"] = session
    SessionMiddleware(lambda r: HttpResponse()).process_request(request)
    AuthenticationMiddleware(lambda r: HttpResponse()).process_request(request)

    facts = keep.read(request, ("watching", "cs.DC", keep.READER))

    assert not request.user.is_authenticated
    assert facts["watching", "cs.DC", None] is False
