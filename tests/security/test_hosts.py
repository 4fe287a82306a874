"""A request naming a host the site does not serve is refused (400), whether its page is kept
in a worker's memory, in the shared cache, or rendered afresh: a cached page must never skip
the check that a fresh one gets."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db

SITE = "peerrevenue.example"


@pytest.fixture
def production_hosts(settings):
    settings.ALLOWED_HOSTS = [SITE]
    settings.PAGE_CACHE_SECONDS = 60


@pytest.fixture
def paper(cs_dc):
    paper = make_paper(title="Hosts and headers")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 25))
    return paper


def test_a_foreign_host_is_refused_on_a_page_kept_in_memory(client, production_hosts, paper):
    for _ in range(3):  # rendered, then answered from the shared cache and from memory
        assert client.get("/list/cs.DC/", HTTP_HOST=SITE).status_code == 200
    answers = {client.get("/list/cs.DC/", HTTP_HOST="evil.example").status_code for _ in range(20)}
    assert answers == {400}
    # The page is still kept for the real host.
    assert client.get("/list/cs.DC/", HTTP_HOST=SITE).status_code == 200


@pytest.mark.parametrize(
    "path", ["/list/cs.DC/", "/market/", "/abs/{arxiv_id}/", "/search/?q=hosts", "/market/rules/"]
)
def test_a_foreign_host_is_refused_on_pages_not_kept(client, production_hosts, paper, path):
    path = path.format(arxiv_id=paper.arxiv_id)
    assert client.get(path, HTTP_HOST="evil.example").status_code == 400
    assert client.get(path, HTTP_HOST=f"{SITE}.evil.example").status_code == 400
    assert client.get(path, HTTP_HOST=SITE).status_code == 200
