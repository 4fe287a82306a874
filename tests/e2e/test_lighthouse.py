"""Lighthouse, as a phone sees it, scores 100 for accessibility, best practices and SEO on the
list, market, term and paper pages: one run each, against the live server, read as a newcomer
arriving from a search engine (signed out)."""

from __future__ import annotations

import json

import pytest

from tests.e2e.audits import lighthouse, lighthouse_shortfalls
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_layout import market_day

__all__ = ["market_day"]  # the fixture, imported for these tests

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = {
    "list": "/list/cs.DC/",
    "market": "/market/",
    "term": "/market/kv-cache/",
    "paper": "/abs/2611.00001/",
}


def test_lighthouse_scores_100_on_the_main_pages(live_server, market_day):
    scores = {}
    for name, path in PAGES.items():
        report = lighthouse(live_server.url + path)
        # The whole report, for a look at what an audit found (CI keeps artifacts/).
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / f"lighthouse-{name}.json").write_text(json.dumps(report), encoding="utf-8")
        scores[name] = lighthouse_shortfalls(report)
    short = {
        name: found
        for name, found in scores.items()
        if any(category["score"] < 100 for category in found.values())
    }
    assert not short, json.dumps(scores, indent=1)
