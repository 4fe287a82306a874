"""A small market maker for Peer Revenue, through its API.

It keeps two limit orders on one term: a bid a little under the term's price and an ask a
little over it (the ask only while it holds shares to sell). Each round it reads the price,
cancels its orders that have drifted too far from where they should be, and places what is
missing, each with a fresh idempotency key, so a request it retries after a timeout places
one order, not two.

Run it with a token that has the "trade" and "read-private" scopes (make one in Settings →
API tokens):

    PEER_REVENUE_TOKEN=prt_… python docs/examples/market_maker.py --term kv-cache \
        --base-url https://peer-revenue.example --spread 2 --shares 5 --rounds 0

Only ``requests`` is needed. Money on the API is in µ¢ (millionths of a credit).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import requests


@dataclass
class Maker:
    base_url: str
    token: str
    term: str
    spread_bp: int = 200  # each order's distance from the price, in basis points
    shares: int = 5  # the size of each order
    tolerance_bp: int = 50  # how far an order may drift before it is replaced
    session: requests.Session = field(default_factory=requests.Session)
    log: list[str] = field(default_factory=list)

    def _call(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        for attempt in range(5):
            answer = self.session.request(
                method, f"{self.base_url}/api/v1{path}", headers=headers, timeout=10, **kwargs
            )
            if answer.status_code != 429 and answer.status_code < 500:
                return answer
            # Limited, or the site is briefly unavailable: wait as long as it asks.
            time.sleep(min(float(answer.headers.get("Retry-After", 2**attempt)), 30))
        answer.raise_for_status()
        return answer

    def price(self) -> int:
        answer = self._call("GET", f"/terms/{self.term}")
        answer.raise_for_status()
        return int(answer.json()["price"])

    def held(self) -> int:
        answer = self._call("GET", "/me")
        answer.raise_for_status()
        return sum(h["shares"] for h in answer.json()["holdings"] if h["term"] == self.term)

    def my_orders(self) -> list[dict[str, Any]]:
        answer = self._call("GET", "/orders")
        answer.raise_for_status()
        return [
            order
            for order in answer.json()["items"]
            if order["term"] == self.term and order["state"] == "waiting"
        ]

    def targets(self, price: int) -> dict[str, int]:
        """Where the bid and the ask belong around ``price``, in µ¢ a share."""
        return {
            "buy": max(price * (10_000 - self.spread_bp) // 10_000, 10_000),
            "sell": price * (10_000 + self.spread_bp) // 10_000,
        }

    def place(self, side: str, limit: int) -> dict[str, Any] | None:
        key = f"maker-{uuid.uuid4().hex}"
        body = {"side": side, "shares": self.shares, "limit_price": limit}
        answer = self._call(
            "POST", f"/terms/{self.term}/orders", json=body, headers={"Idempotency-Key": key}
        )
        if answer.status_code in (200, 201):
            order = answer.json()
            self.log.append(f"placed {side} {self.shares} at {limit} µ¢: {order['state']}")
            return order
        # A refusal says why, in words: no cash left, no shares to sell, trading halted.
        self.log.append(f"not placed ({side}): {answer.json().get('detail')}")
        return None

    def cancel(self, order: dict[str, Any]) -> None:
        answer = self._call("DELETE", f"/orders/{order['id']}")
        self.log.append(
            f"cancelled {order['side']} at {order['limit_price']} µ¢ ({answer.status_code})"
        )

    def step(self) -> dict[str, int]:
        """One round: the orders either side of the price, as they should be now."""
        targets = self.targets(self.price())
        kept: set[str] = set()
        for order in self.my_orders():
            target = targets[order["side"]]
            drift = abs(order["limit_price"] - target) * 10_000 // target
            if drift > self.tolerance_bp or order["side"] in kept:
                self.cancel(order)
            else:
                kept.add(order["side"])
        if "buy" not in kept:
            self.place("buy", targets["buy"])
        if "sell" not in kept and self.held() >= self.shares:
            self.place("sell", targets["sell"])
        return targets

    def run(self, *, rounds: int, pause: float) -> None:
        done = 0
        while rounds == 0 or done < rounds:
            targets = self.step()
            print(f"bid {targets['buy']} µ¢, ask {targets['sell']} µ¢", *self.log, sep="\n  ")
            self.log.clear()
            done += 1
            time.sleep(pause)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default="http://127.0.0.1:8000")
    parser.add_argument("--term", required=True, help="the term's slug, e.g. kv-cache")
    parser.add_argument("--spread", type=float, default=2.0, help="percent either side")
    parser.add_argument("--shares", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=0, help="0: until stopped")
    parser.add_argument("--pause", type=float, default=30.0, help="seconds between rounds")
    options = parser.parse_args(argv)
    token = os.environ.get("PEER_REVENUE_TOKEN", "")
    if not token:
        print("Set PEER_REVENUE_TOKEN to a token with the trade and read-private scopes.")
        return 2
    maker = Maker(
        base_url=options.base_url.rstrip("/"),
        token=token,
        term=options.term,
        spread_bp=round(options.spread * 100),
        shares=options.shares,
    )
    maker.run(rounds=options.rounds, pause=options.pause)
    return 0


if __name__ == "__main__":
    sys.exit(main())
