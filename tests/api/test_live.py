"""Against a live server (real requests, real connections): the example market maker from
the docs, and racing retries of one trade that must trade once."""

from __future__ import annotations

import importlib.util
import sys
import threading
import uuid
from pathlib import Path
from types import ModuleType

import pytest
import requests

from api.tokens import make_token
from market.models import Order, Term, Trade
from tests.factories import buy

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "market_maker.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("market_maker", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def kv(db) -> Term:
    return Term.objects.create(phrase="KV cache", slug="kv-cache")


def waiting(user) -> dict[str, int]:
    return {
        order.side: order.limit_price
        for order in Order.objects.filter(account__user=user, state=Order.State.OPEN)
    }


def test_the_example_market_maker_keeps_orders_either_side_of_the_price(
    live_server, kv, trader, rival, settings
):
    settings.API_REQUESTS_PER_TOKEN = 10_000
    buy(trader, kv, 20)
    secret = make_token(user=trader, name="maker", scopes=["trade", "read-private"]).secret
    maker = load_example().Maker(
        base_url=live_server.url, token=secret, term="kv-cache", spread_bp=200, shares=3
    )

    first = maker.step()
    kv.refresh_from_db()
    assert first == maker.targets(kv.price)
    assert waiting(trader) == first
    assert first["buy"] < kv.price < first["sell"]

    # The market trades: a rival buys a lot, the price leaves the maker's orders behind (its
    # ask may fill on the way up), and the next round centres them on the new price.
    buy(rival, kv, 40)
    second = maker.step()
    kv.refresh_from_db()
    assert second["buy"] > first["buy"]
    assert waiting(trader) == second
    assert second["buy"] < kv.price < second["sell"]
    # A round with nothing moved changes nothing.
    placed = Order.objects.filter(account__user=trader).count()
    maker.step()
    assert Order.objects.filter(account__user=trader).count() == placed
    assert maker.log and not any("not placed" in line for line in maker.log)


def test_racing_retries_with_one_key_trade_once(live_server, kv, trader, settings):
    settings.API_REQUESTS_PER_TOKEN = 10_000
    secret = make_token(user=trader, name="bot", scopes=["trade"]).secret
    key = uuid.uuid4().hex
    barrier = threading.Barrier(6)
    answers: list[requests.Response] = []

    def send() -> None:
        barrier.wait()
        answers.append(
            requests.post(
                f"{live_server.url}/api/v1/terms/kv-cache/trades",
                json={"side": "buy", "shares": 4},
                headers={"Authorization": f"Bearer {secret}", "Idempotency-Key": key},
                timeout=30,
            )
        )

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answer.status_code for answer in answers) == [200] * 5 + [201]
    assert len({answer.json()["id"] for answer in answers}) == 1
    assert Trade.objects.filter(account__user=trader).count() == 1
    kv.refresh_from_db()
    assert kv.supply == 4
