"""/robots.txt as a crawler reads it (RFC 9309: the longest matching rule wins, `*` matches
any run of characters): the links of a public page may be followed, except those to a
reader's own pages, sign-in, the admin and what only machines or forms use."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from market.models import Term
from tests.factories import list_paper, make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db


def allowed(robots: str, path: str) -> bool:
    """RFC 9309 §2.2.2 for the group `User-agent: *`: the longest match decides, Allow on a tie."""
    best: tuple[int, bool] = (-1, True)
    for kind, pattern in re.findall(r"^(Allow|Disallow):\s*(\S*)", robots, re.M | re.I):
        if not pattern:
            continue
        regex = "".join(".*" if c == "*" else re.escape(c) for c in pattern.rstrip("$"))
        if re.match(regex + ("$" if pattern.endswith("$") else ""), path):
            rule = (len(pattern), kind.lower() == "allow")
            best = max(best, rule)
    return best[1]


@pytest.fixture
def robots(client, django_assert_num_queries) -> str:
    with django_assert_num_queries(0):
        response = client.get("/robots.txt")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert text.startswith("User-agent: *\n")
    return text


def test_a_crawler_may_follow_the_public_pages_links(robots, client, cs_dc):
    Term.objects.create(phrase="consensus")
    paper = make_paper(abstract="We study consensus in asynchronous networks.")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 25))
    public = [
        "/list/cs.DC/",
        "/list/cs.DC/feed/",
        "/list/cs.DC/2026-11-25/",
        f"/abs/{paper.arxiv_id}/",
        "/author/Ada%20Lovelace/",
        "/market/",
        "/market/consensus/",
        "/market/rules/",
        "/leaderboard/",
        "/hot/",
    ]
    for path in public:
        assert allowed(robots, path), path
    # What the listing links to: every paper and term may be followed; only sign-in and
    # sign-up (with the way back) may not.
    page = Page.parse(client.get("/list/cs.DC/").content.decode())
    links = {href for href, _ in page.links() if href.startswith("/")}
    assert {f"/abs/{paper.arxiv_id}/", "/market/consensus/"} <= links
    refused = {href.split("?")[0] for href in links if not allowed(robots, href)}
    assert refused == {"/accounts/login/", "/accounts/signup/"}


def test_private_pages_forms_and_machine_paths_are_left_alone(robots):
    for path in [
        "/admin/",
        "/admin/login/?next=/admin/",
        "/accounts/login/",
        "/accounts/signup/?next=/list/cs.DC/",
        "/accounts/settings/",
        "/portfolio/",
        "/library/export.bib",
        "/searches/",
        "/search/?q=consensus",
        "/metrics",
        "/healthz",
        "/market/tickers.json",
        "/market/consensus/quote/?side=buy&shares=3",
        "/market/consensus/quote.json?side=buy&shares=3",
        "/market/consensus/offer.json",
        "/market/consensus/trade/",
        "/abs/2611.00001/save/",
    ]:
        assert not allowed(robots, path), path


def test_only_get_and_head(client):
    assert client.post("/robots.txt").status_code == 405
    assert client.head("/robots.txt").status_code == 200
