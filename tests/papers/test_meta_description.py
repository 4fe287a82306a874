"""What a search engine shows under a page's title: each page's <meta name="description">, from
its own content where it has one (a paper's abstract, a category's name, a term)."""

from __future__ import annotations

import datetime as dt

import pytest

from market.models import Term
from tests.factories import list_paper, make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 10, 2)


def description(response) -> str:
    assert response.status_code == 200
    return Page.of(response).one("meta", name="description").get("content", "")


def test_a_paper_is_described_by_the_start_of_its_abstract_as_plain_text(client, cs_dc):
    abstract = "We bound gossip rounds by $O(\\log n)$ under churn. " + "More words here. " * 20
    list_paper(make_paper(arxiv_id="2610.00042", abstract=abstract), category=cs_dc, date=DAY)
    found = description(client.get("/abs/2610.00042/"))
    assert found.startswith("We bound gossip rounds by O(log n) under churn. More words")
    assert len(found) <= 160 and found.endswith("…")


def test_a_short_abstract_is_the_whole_description(client, cs_dc):
    list_paper(make_paper(arxiv_id="2610.00043", abstract="Raft, again."), category=cs_dc, date=DAY)
    assert description(client.get("/abs/2610.00043/")) == "Raft, again."


def test_a_category_and_a_term_are_named_in_theirs(client, cs_dc):
    list_paper(make_paper(arxiv_id="2610.00044"), category=cs_dc, date=DAY)
    assert "Distributed Computing (cs.DC)" in description(client.get("/list/cs.DC/"))
    Term.objects.create(phrase="KV cache")
    assert "“KV cache”" in description(client.get("/market/kv-cache/"))


def test_every_other_page_says_what_the_site_is(client):
    for path in ("/market/", "/market/rules/", "/accounts/login/", "/search/?q=raft"):
        assert "arXiv" in description(client.get(path)), path
