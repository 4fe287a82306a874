"""What a trade and a fill pass share: the client's key, the fee shard, the prepared call.

``market.trading`` places trades and ``market.orders`` fills orders as trades; both check a
client key the same way, pay fees into the same shard for a term, and run their one fixed
statement (``market_place_trade``, ``market_fill_orders``) as a prepared statement. These live
here, below both, so that neither reaches into the other for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import models

from peerrevenue.db import prepared_row

from .models import Account, Trade
from .refusals import InvalidRequest

_key_field = Trade._meta.get_field("key")
assert isinstance(_key_field, models.CharField) and _key_field.max_length is not None
KEY_MAX_LENGTH = _key_field.max_length


def check_key(key: object) -> str:
    """The client's idempotency key, or ``InvalidRequest`` saying what a key must be."""
    if not isinstance(key, str) or not key or len(key) > KEY_MAX_LENGTH:
        raise InvalidRequest(
            f"Each trade needs a key of 1 to {KEY_MAX_LENGTH} characters so that a repeated "
            "submission is not traded twice; reload the page and try again."
        )
    return key


def fee_shard(term_id: int) -> int:
    """The fee account row a term's trades pay into."""
    # By term: trades on one term already queue on its lock, so they lose nothing by sharing
    # a fee row, while trades on different terms mostly write different fee rows.
    return term_id % Account.FEE_SHARDS


def fetch_row(sql: str, params: Sequence[object]) -> tuple:
    """Run a fixed statement of the trade path as a prepared statement."""
    row = prepared_row(sql, params)
    if row is None:  # each statement here is a SELECT of one function call: one row
        raise AssertionError(f"no row from {sql}")
    return row
