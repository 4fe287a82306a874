"""What a program sends to act, and what it gets back (quotes, trades, orders, follows,
its library). Money in µ¢, as in ``schemas``."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from ninja import Schema
from pydantic import Field

Side = Literal["buy", "sell"]


class QuoteIn(Schema):
    side: Side
    shares: int


class QuoteOut(Schema):
    side: str
    shares: int
    amount: int = Field(description="Along the curve, fee excluded")
    fee: int
    total: int = Field(description="What a buyer pays or a seller receives, fee included")
    average_price: int
    price_before: int
    price_after: int
    problem: str = Field(description="What would stop you placing it; empty: nothing")


class TradeIn(Schema):
    side: Side
    shares: int
    limit: int | None = Field(
        None, description="Buy: the most to pay, fee included. Sell: the least to receive."
    )


class TradeOut(Schema):
    id: int
    term: str
    side: str
    shares: int
    amount: int
    fee: int
    total: int
    price_before: int
    price_after: int
    at: dt.datetime
    key: str
    repeated: bool = Field(description="This key had traded already: this is that trade")


class OrderIn(Schema):
    side: Side
    shares: int
    limit_price: int = Field(description="µ¢ a share: the most paid, or the least taken")
    expires_in_seconds: int | None = Field(None, description="None: until filled or cancelled")


class OrderOut(Schema):
    id: int
    term: str
    side: str
    shares: int
    filled: int
    limit_price: int
    state: str = Field(description="waiting, filled, cancelled or expired")
    reason: str
    created_at: dt.datetime
    expires_at: dt.datetime | None
    key: str
    repeated: bool


class Orders(Schema):
    items: list[OrderOut]


class FollowIn(Schema):
    threshold_bp: int | None = Field(None, description="Tell me of moves past this, in bp")


class FollowOut(Schema):
    term: str
    following: bool
    threshold_bp: int | None


class HoldingOut(Schema):
    term: str
    shares: int


class Me(Schema):
    username: str
    cash: int
    holdings: list[HoldingOut]
    scopes: list[str]


class TagsIn(Schema):
    tags: list[str]


class SavedOut(Schema):
    arxiv_id: str
    saved: bool
    tags: list[str]


class Shelf(Schema):
    items: list[SavedOut]
