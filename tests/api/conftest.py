"""The API's personas: a trader's program holding a token with some scopes."""

from __future__ import annotations

import pytest

from api.models import Scope
from api.tokens import make_token

ALL_SCOPES = [Scope.READ_PRIVATE, Scope.TRADE, Scope.LIBRARY]


def bearer(secret: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {secret}"}


@pytest.fixture
def trader_secret(trader) -> str:
    """A token of the trader's with every scope (their market-making program's)."""
    return make_token(user=trader, name="market maker", scopes=ALL_SCOPES).secret


@pytest.fixture
def read_secret(trader) -> str:
    """A token of the trader's that may only read their account."""
    return make_token(user=trader, name="dashboard", scopes=[Scope.READ_PRIVATE]).secret
