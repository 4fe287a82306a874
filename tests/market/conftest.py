"""Market fixtures: terms, and a snapshot of every balance to prove refusals change nothing."""

from __future__ import annotations

import pytest

from market.models import Term
from tests.market.state import market_state


@pytest.fixture
def raft(db) -> Term:
    return Term.objects.create(phrase="Raft", p0=2_000_000, k=50_000)


@pytest.fixture
def snapshot():
    return market_state
