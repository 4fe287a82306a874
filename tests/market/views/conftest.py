"""The market pages' fixtures: a trader signed in on the test client."""

from __future__ import annotations

import pytest


@pytest.fixture
def trader_client(client, trader, password):
    client.login(username=trader.username, password=password)
    return client
