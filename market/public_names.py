"""How a trader is named where anyone can see them (a term page's holders and trades, the
leaderboard): by their name, or as "a trader" when they keep their trader page private.

Which traders are private is the accounts app's to say (its preference), so it tells this
module, in its ``AppConfig.ready``, with the SQL of their user ids (``private_traders``): the
market needs no import of accounts, as papers.streams takes saved searches. Pages that keep
what they show of traders key it by ``FACT``, a stamp the database moves whenever a trader
hides or shows their page.
"""

from __future__ import annotations

from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

# What a private trader is called in public.
HIDDEN_NAME = "a trader"
# The fact (peerrevenue.keep) that moves when a trader hides or shows their page.
FACT = "traders"

_private_sql = "SELECT NULL::integer WHERE false"  # nobody, until an app says otherwise


def private_traders(sql: str) -> None:
    """Say who is private: ``sql`` selects the user ids of traders not to be named."""
    global _private_sql
    _private_sql = sql


def private_sql() -> str:
    """A subquery of the user ids of private traders, for ``user_id IN (…)``."""
    return _private_sql


def is_private(user_id_column: str) -> RawSQL:
    """Whether the row's user is private, as a column of the same query (``user_id_column``:
    the quoted table and column, e.g. '"market_account"."user_id"')."""
    return RawSQL(f"{user_id_column} IN ({_private_sql})", (), output_field=BooleanField())
