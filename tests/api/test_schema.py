"""Schemathesis against a live server: cases generated from the API's own OpenAPI document
(reads, trades, orders, library, with a token holding every scope), none answered with a 5xx,
and every answer (status, content type, headers, body) as the document describes it."""

from __future__ import annotations

import datetime as dt

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from api.site import api
from api.tokens import make_token
from market.models import Term
from tests.factories import announce, buy

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture
def site(live_server, transactional_db, django_user_model, settings):
    """A live site with something on it: a term that trades, a listed paper, a trader whose
    token the generated cases act with."""
    from papers.models import Category

    settings.API_REQUESTS_PER_ADDRESS = 100_000
    settings.API_REQUESTS_PER_TOKEN = 100_000
    settings.RATELIMIT_TRADES_PER_WINDOW = 100_000
    category, _ = Category.objects.get_or_create(
        code="cs.DC", defaults={"name": "Distributed Computing", "archive_code": "cs"}
    )
    trader = django_user_model.objects.create_user("fuzz", "fuzz@example.org", "x")
    kv = Term.objects.create(phrase="KV cache", slug="kv-cache")
    buy(trader, kv, 5)
    announce(kv, date=dt.date(2026, 11, 3), category=category, arxiv_id="2611.00001")
    secret = make_token(user=trader, name="fuzz", scopes=["read-private", "trade", "library"])
    return live_server.url, secret.secret


# The document the site serves at /api/v1/openapi.json (test_conventions checks they match),
# read here at collection so each operation is a test of its own.
schema = schemathesis.openapi.from_dict(api.get_openapi_schema(path_prefix="/api/v1"))


@pytest.mark.slow
@schema.parametrize()
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_5xx_and_every_answer_as_documented(case, site):
    url, secret = site
    case.call_and_validate(
        base_url=url, headers={"Authorization": f"Bearer {secret}"}, checks=CHECKS
    )
