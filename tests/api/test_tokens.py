"""Personal tokens: made and revoked on the reader's settings, shown once, kept hashed,
scoped, refused at once when revoked, and never written to a log."""

from __future__ import annotations

import hashlib
import logging

import pytest
from django.utils import timezone

from api.models import Scope, Token
from api.tokens import make_token
from tests.html import Page

from .conftest import bearer

pytestmark = pytest.mark.django_db


def test_a_reader_makes_a_token_sees_it_once_and_it_is_stored_hashed(client, trader):
    client.force_login(trader)
    assert "API tokens" in Page.of(client.get("/accounts/settings/")).text
    made = client.post(
        "/accounts/settings/tokens/",
        {"action": "make", "name": "my bot", "scopes": ["trade", "read-private"]},
    )
    assert made["Cache-Control"] == "no-store"
    page = Page.of(made)
    secret = page.one("input", id="new-secret").get("value")
    assert secret and secret.startswith("prt_")
    stored = Token.objects.get(user=trader)
    assert stored.digest == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in repr(Token.objects.values().get(pk=stored.pk))
    assert sorted(stored.scopes) == ["read-private", "trade"]
    # Shown once: the next visit lists it by name and prefix only.
    listed = client.get("/accounts/settings/tokens/").content.decode()
    assert "my bot" in listed and secret not in listed
    assert client.get("/api/v1/me", **bearer(secret)).json()["username"] == "tobias"


def test_a_token_without_a_name_or_with_a_made_up_scope_is_refused(client, trader):
    client.force_login(trader)
    nameless = client.post("/accounts/settings/tokens/", {"action": "make", "name": " "})
    assert nameless.status_code == 400
    assert "Give the token a name" in Page.of(nameless).text
    forged = client.post(
        "/accounts/settings/tokens/", {"action": "make", "name": "x", "scopes": ["admin"]}
    )
    assert "There is no scope “admin”" in Page.of(forged).text
    assert not Token.objects.exists()


def test_revoking_on_the_settings_page_refuses_the_token_at_once(client, trader, trader_secret):
    assert client.get("/api/v1/me", **bearer(trader_secret)).status_code == 200
    token = Token.objects.get(user=trader)
    client.force_login(trader)
    client.post("/accounts/settings/tokens/", {"action": "revoke", "token": token.pk})
    # Nothing was remembered in this process: the next request reads the revocation.
    refused = client.get("/api/v1/me", **bearer(trader_secret))
    assert refused.status_code == 401
    assert refused["Content-Type"] == "application/problem+json"
    assert refused["WWW-Authenticate"].startswith("Bearer")


def test_a_revocation_made_elsewhere_is_seen_on_the_next_request(client, trader, trader_secret):
    """As when another instance revoked it: nothing in this process is told, and nothing
    here remembered the token, so the very next request reads the revocation."""
    assert client.get("/api/v1/me", **bearer(trader_secret)).status_code == 200
    Token.objects.filter(user=trader).update(revoked_at=timezone.now())
    assert client.get("/api/v1/me", **bearer(trader_secret)).status_code == 401


def test_another_readers_token_cannot_be_revoked_by_guessing_its_id(client, trader, rival):
    theirs = make_token(user=rival, name="theirs", scopes=[]).token
    client.force_login(trader)
    answer = client.post("/accounts/settings/tokens/", {"action": "revoke", "token": theirs.pk})
    assert "You have no such token" in Page.of(answer).text
    theirs.refresh_from_db()
    assert theirs.revoked_at is None


def test_a_read_token_cannot_trade_save_or_follow(client, read_secret, cs_dc):
    from market.models import Term

    Term.objects.create(phrase="KV cache", slug="kv-cache")
    answer = client.post(
        "/api/v1/terms/kv-cache/trades",
        {"side": "buy", "shares": 1},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k1",
        **bearer(read_secret),
    )
    assert answer.status_code == 403
    assert "needs the “trade” scope" in answer.json()["detail"]
    assert client.put("/api/v1/library/2611.00001", **bearer(read_secret)).status_code == 403
    assert (
        client.put(
            "/api/v1/terms/kv-cache/follow",
            {},
            content_type="application/json",
            **bearer(read_secret),
        ).status_code
        == 403
    )


def test_last_use_is_recorded(client, trader, read_secret):
    assert Token.objects.get(user=trader).last_used_at is None
    client.get("/api/v1/me", **bearer(read_secret))
    assert Token.objects.get(user=trader).last_used_at is not None


def test_a_token_never_appears_in_the_logs(client, trader, read_secret, caplog, settings):
    settings.DEBUG = True  # the most a log ever says
    with caplog.at_level(logging.DEBUG):
        client.get("/api/v1/me", **bearer(read_secret))
        client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {read_secret}")
        client.get("/api/v1/orders/99999", **bearer(read_secret))
        client.post(
            "/api/v1/terms/x/trades", "{", content_type="application/json", **bearer(read_secret)
        )
    everything = "\n".join(f"{record.getMessage()} {record.args}" for record in caplog.records)
    assert caplog.records  # the requests were logged …
    assert read_secret not in everything  # … without the secret
    assert read_secret[4:20] not in everything


def test_scopes_are_the_three_the_brief_names():
    assert {scope.value for scope in Scope} == {"read-private", "trade", "library"}
