"""The days of a category page are rendered once and shown to every reader, signed in or not,
with each reader's own parts and the current prices around them."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from market.models import Term
from tests.factories import buy, list_paper, make_paper
from tests.html import Page
from tests.text import search

pytestmark = pytest.mark.django_db

FRIDAY = dt.date(2026, 10, 2)
URL = "/list/cs.DC/"


@pytest.fixture
def gpu(db) -> Term:
    return Term.objects.create(phrase="GPU")


@pytest.fixture
def gpu_paper(cs_dc, gpu):
    paper = make_paper(title="Eight GPUs", abstract="We train on eight GPUs at once.")
    list_paper(paper, category=cs_dc, date=FRIDAY)
    return paper


def signed_in_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def gpu_title(client: Client) -> str:
    content = client.get(URL).content.decode()
    assert "\ue001GPU\ue002" not in content, "an open price title reached the reader"
    return search(r'<a class="term" href="/market/gpu/" title="([^"]*)"', content)[1]


def test_each_reader_sees_their_own_name_and_watch_around_the_same_days(
    gpu_paper, cs_dc, reader, trader
):
    cs_dc.toggle_watch(trader)
    watching = Page.of(signed_in_client(trader).get(URL))
    not_watching = Page.of(signed_in_client(reader).get(URL))
    assert "Eight GPUs" in watching.text and "Eight GPUs" in not_watching.text
    assert "Unwatch" in watching.text and "1 watcher" in watching.text
    assert "Unwatch" not in not_watching.text and "1 watcher" in not_watching.text
    assert trader.username in watching.text and trader.username not in not_watching.text
    assert reader.username in not_watching.text


def test_kept_days_show_the_price_after_every_trade(gpu_paper, gpu, reader, trader):
    client = signed_in_client(reader)
    assert gpu_title(client).startswith("GPU: 1.00 credits a share")
    buy(trader, gpu, 10)
    assert gpu_title(client).startswith("GPU: 1.10 credits a share")
    assert gpu_title(Client()).startswith("GPU: 1.10 credits a share")  # anonymous, page cache on


def test_the_second_render_does_not_render_the_days_again(gpu_paper, reader):
    client = signed_in_client(reader)
    client.get(URL)
    with CaptureQueriesContext(connection) as queries:
        page = Page.of(client.get(URL))
    assert "Eight GPUs" in page.text
    assert not any("papers_listing" in query["sql"] for query in queries.captured_queries)


def test_an_abstract_cannot_forge_a_price_title(cs_dc, gpu, reader):
    # The tag a real open title carries is derived from the secret key; a guess stays text.
    forged = "\ue000abcdef012345" + str(gpu.pk) + "\ue001forged\ue002"
    paper = make_paper(title="Forged", abstract=f"Text {forged} and a GPU.")
    list_paper(paper, category=cs_dc, date=FRIDAY)
    content = signed_in_client(reader).get(URL).content.decode()
    assert forged in content
    assert gpu_title(signed_in_client(reader)) != "forged"
