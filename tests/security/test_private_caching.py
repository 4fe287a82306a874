"""What a shared cache may keep: nothing a signed-in reader is sent (their name, money,
library, searches, settings), while anonymous pages keep the headers they had."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import Client

from accounts.saved_searches import save_search
from library import saves
from market.models import Term
from tests.factories import buy, make_listed_papers

pytestmark = pytest.mark.django_db

# Every page that shows a reader's own things, and the pages that show them among the rest.
SIGNED_IN_PAGES = [
    "/",
    "/portfolio/",
    "/library/",
    "/library/export.bib",
    "/library/export.txt",
    "/accounts/settings/",
    "/searches/",
    "/recommended/",
    "/traders/tobias/",
    "/market/",
    "/market/kv-cache/",
    "/market/kv-cache/quote/?side=buy&shares=2",
    "/market/kv-cache/offer.json",
    "/leaderboard/",
    "/list/cs.DC/",
    "/search/?q=consensus",
    "/hot/",
]


@pytest.fixture
def signed_in(trader, cs_dc) -> Client:
    papers = make_listed_papers(2, category=cs_dc, date=dt.date(2026, 11, 24))
    saves.save(user=trader, paper=papers[0])
    save_search(user=trader, text="consensus")
    buy(trader, Term.objects.create(phrase="KV cache"), 3)
    client = Client()
    client.force_login(trader)
    return client


@pytest.mark.parametrize("url", SIGNED_IN_PAGES)
def test_every_page_a_signed_in_reader_gets_is_private(signed_in, url):
    response = signed_in.get(url)
    assert response.status_code == 200, url
    directives = {d.strip() for d in response["Cache-Control"].split(",")}
    if "no-store" not in directives:  # kept nowhere at all; else by the browser alone
        assert "private" in directives and "public" not in directives, response["Cache-Control"]
        assert "no-cache" in directives or any(d.startswith("max-age") for d in directives)


def test_signing_in_answers_privately_from_the_first_response(client, reader, password):
    response = client.post(
        "/accounts/login/", {"username": reader.username, "password": password}, follow=True
    )
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]


@pytest.mark.parametrize("url", ["/list/cs.DC/", "/market/", "/leaderboard/", "/hot/"])
def test_anonymous_pages_are_not_marked_private(client, cs_dc, url):
    make_listed_papers(1, category=cs_dc, date=dt.date(2026, 11, 24))
    response = client.get(url)
    assert response.status_code == 200
    assert "private" not in response.get("Cache-Control", "")
