"""The conventions a program relies on: the OpenAPI document and its reference page, errors
as problems, the rate limits and their headers, reads from replicas like the pages."""

from __future__ import annotations

import pytest
from django.urls import resolve

from peerrevenue import replicas
from tests.html import Page

from .conftest import bearer

pytestmark = pytest.mark.django_db


def test_the_openapi_document_is_3_1_and_names_every_endpoint(client):
    answer = client.get("/api/v1/openapi.json")
    assert answer.status_code == 200
    document = answer.json()
    assert document["openapi"].startswith("3.1")
    paths = document["paths"]
    assert "/api/v1/categories/{code}/days/{date}" in paths
    assert set(paths["/api/v1/terms/{slug}/trades"]) == {"get", "post"}
    trade = paths["/api/v1/terms/{slug}/trades"]["post"]
    assert trade["security"] == [{"TradeToken": []}]
    assert "application/problem+json" in trade["responses"]["409"]["content"]
    assert "304" in paths["/api/v1/terms"]["get"]["responses"]


def test_the_reference_page_lists_every_endpoint_with_its_scope(client):
    page = Page.of(client.get("/api/v1/reference/"))
    assert "Peer Revenue API" in page.text
    headings = page.texts("h2")
    assert "POST /api/v1/terms/{slug}/trades" in headings
    assert "GET /api/v1/categories" in headings
    trade = page.one("section", id="api_acting_trade")
    assert "token scope: trade" in trade.text
    assert "Idempotency-Key" in trade.text


def test_errors_are_problems_with_the_webs_message(client):
    answer = client.get("/api/v1/terms/no-such-term/trades")
    assert answer.status_code == 404
    assert answer["Content-Type"] == "application/problem+json"
    assert answer.json() == {
        "type": "about:blank",
        "title": "Not found",
        "status": 404,
        "detail": "There is no term “no-such-term” on the market.",
        "instance": "/api/v1/terms/no-such-term/trades",
    }
    wrong_method = client.patch("/api/v1/categories")
    assert wrong_method.status_code == 405


def test_every_answer_says_its_limit_and_past_it_429_with_retry_after(client, settings):
    settings.API_REQUESTS_PER_ADDRESS = 3
    answers = [client.get("/api/v1/categories") for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert answers[0]["RateLimit-Policy"] == '"address";q=3;w=60'
    assert answers[0]["RateLimit"].startswith('"address";r=2;t=')
    refused = answers[3]
    assert refused["Content-Type"] == "application/problem+json"
    assert refused["RateLimit"].startswith('"address";r=0;')
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert refused.json()["detail"].startswith("You have made 3 requests within a minute, the most")


def test_a_token_has_its_own_allowance_apart_from_its_address(client, settings, read_secret):
    settings.API_REQUESTS_PER_ADDRESS = 1
    settings.API_REQUESTS_PER_TOKEN = 2
    assert client.get("/api/v1/categories").status_code == 200
    assert client.get("/api/v1/categories").status_code == 429
    with_token = [client.get("/api/v1/me", **bearer(read_secret)) for _ in range(3)]
    assert [answer.status_code for answer in with_token] == [200, 200, 429]
    assert with_token[0]["RateLimit-Policy"] == '"token";q=2;w=60'


def test_api_reads_go_to_replicas_as_the_pages_do():
    assert replicas.is_reader_view(resolve("/api/v1/terms").func)
    assert replicas.is_reader_view(resolve("/api/v1/terms/x/trades").func)


def test_what_answers_around_the_endpoints_is_a_problem_too(client):
    nul = client.get("/api/v1/search?q=%00")
    assert nul.status_code == 400
    assert nul["Content-Type"] == "application/problem+json"
    assert "NUL" in nul.json()["detail"] or nul.json()["detail"]
    nowhere = client.get("/api/v1/nowhere")
    assert nowhere.status_code == 404
    assert nowhere.json()["detail"].startswith("There is no such endpoint")
    wrong = client.patch("/api/v1/categories")
    assert wrong.status_code == 405
    assert wrong["Content-Type"] == "application/problem+json"


def test_the_served_document_is_the_one_the_schema_tests_read(client):
    from api.site import api

    served = client.get("/api/v1/openapi.json").json()
    read = api.get_openapi_schema(path_prefix="/api/v1")
    assert served["paths"].keys() == read["paths"].keys()
    assert served["components"] == read["components"]
