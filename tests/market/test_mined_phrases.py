"""Candidate terms in the admin: what recent papers keep saying that the market does not list."""

from __future__ import annotations

import datetime as dt

import pytest

from market.mined_phrases import candidate_terms, phrases_in
from market.models import Term
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db

DAY = dt.date(2026, 11, 27)


@pytest.fixture
def recent_papers(cs_dc):
    for n, text in enumerate(
        [
            "Gradient compression for straggler mitigation in the parameter server.",
            "A parameter server with gradient compression and $O(n)$ memory.",
            "Consensus in the parameter server era: gradient compression revisited.",
            "The KV cache and the parameter server.",
        ]
    ):
        list_paper(make_paper(title=f"Paper {n}", abstract=text), category=cs_dc, date=DAY)


def test_phrases_skip_stopwords_and_math():
    phrases = phrases_in("We study the $x_{parameter}$ parameter server of a cluster.")
    assert "parameter server" in phrases
    assert "the parameter" not in phrases and "server of" not in phrases
    assert "x_" not in " ".join(phrases)


def test_frequent_unlisted_phrases_ranked_by_papers(recent_papers):
    Term.objects.create(phrase="KV cache")
    Term.objects.create(phrase="gradient compression")
    candidates = {c.phrase: c.papers for c in candidate_terms(since=DAY)}
    assert candidates["parameter server"] == 4
    assert "gradient compression" not in candidates  # listed already
    assert "kv cache" not in candidates
    assert list(candidates)[0] == "parameter server"


def test_admin_lists_chosen_candidates(client, curator, recent_papers):
    client.force_login(curator)
    page = client.get("/admin/market/term/candidates/")
    assert page.status_code == 200
    assert "parameter server" in page.content.decode()
    response = client.post(
        "/admin/market/term/candidates/",
        {"phrase": ["parameter server", "not offered"]},
        follow=True,
    )
    assert "Listed 1 term(s): parameter server." in response.content.decode()
    assert list(Term.objects.values_list("phrase", flat=True)) == ["parameter server"]
    assert Term.objects.get().is_tradable


def test_listing_nothing_says_so(client, curator, recent_papers):
    client.force_login(curator)
    response = client.post("/admin/market/term/candidates/", {}, follow=True)
    assert "Choose at least one phrase to list." in response.content.decode()
    assert not Term.objects.exists()


def test_candidates_need_staff(client, reader):
    client.force_login(reader)
    response = client.get("/admin/market/term/candidates/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
