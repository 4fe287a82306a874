"""Market fixtures: terms, and a snapshot of every balance to prove refusals change nothing."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from market.models import Account, Entry, Holding, LedgerTransaction, Term, Trade


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    # The personas are created with passwords; the production hasher costs ~0.5 s per user.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def fresh_matcher_cache():
    # The matcher version lives in the cache, which outlives each test's rolled-back database.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def kv_cache(db) -> Term:
    return Term.objects.create(phrase="KV cache")


@pytest.fixture
def raft(db) -> Term:
    return Term.objects.create(phrase="Raft", p0=2_000_000, k=50_000)


def market_state() -> dict:
    """Everything a refusal must leave untouched."""
    return {
        "accounts": list(Account.objects.order_by("pk").values_list("pk", "cash")),
        "holdings": list(Holding.objects.order_by("pk").values_list("pk", "shares")),
        "terms": list(
            Term.objects.order_by("pk").values_list("pk", "supply", "reserve", "version", "status")
        ),
        "trades": Trade.objects.count(),
        "transactions": LedgerTransaction.objects.count(),
        "entries": Entry.objects.count(),
    }


@pytest.fixture
def snapshot():
    return market_state
