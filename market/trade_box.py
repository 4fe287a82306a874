"""What a term page's trade box shows the signed-in reader: read on every request (never kept),
in one statement: their cash, their holding of the term, their follow of it, and whether they
have orders on it. Their orders themselves are read only when they have some.

The term page reads these figures as one of its facts (``peerrevenue.keep``), in the statement
that reads what its kept pieces are keyed by: a signed-in term page then costs the session's
round trip and that one, with none of the trade box's own (``FACT``, registered by the app).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from django.db import connection

from peerrevenue import keep, replicas
from peerrevenue.db import prepared_rows

from . import notices
from .cash import balance
from .models import Account, Follow, Holding, Order, Term

FACT = "trade_box"


@dataclass(frozen=True, slots=True)
class Reader:
    cash: int  # µ¢
    held: int  # shares of the term
    follow_threshold_bp: int | None  # None: not following
    has_orders: bool  # any order on the term, waiting or done


@cache
def fact_sql() -> str:
    """The reader's figures on the term (its slug, then the user's id) as one JSON array,
    ``[cash, held, follow threshold, has orders]``; NULL for a user without an account yet.
    One row at most: an account per user, a holding and a follow per account and term."""
    quote = connection.ops.quote_name
    table = {model: quote(model._meta.db_table) for model in (Term, Account, Holding, Follow)}
    return (
        "SELECT json_build_array(a.cash, h.shares, f.threshold_bp,"  # noqa: S608 - our names
        f" EXISTS (SELECT 1 FROM {quote(Order._meta.db_table)} o"
        "   WHERE o.account_id = a.id AND o.term_id = t.id))"
        f" FROM {table[Term]} t JOIN {table[Account]} a ON true"
        f" LEFT JOIN {table[Holding]} h ON h.account_id = a.id AND h.term_id = t.id"
        f" LEFT JOIN {table[Follow]} f ON f.user_id = a.user_id AND f.term_id = t.id"
        " WHERE t.slug = %s AND a.user_id = %s"
    )


def wanted(*, slug: str) -> tuple[str, str, object]:
    """The fact to read with a term page's others, for ``reader`` (none without a reader)."""
    return (FACT, slug, keep.READER)


def reader(*, user, term_id: int, slug: str, facts: keep.Facts | None = None) -> Reader:
    """The reader's figures on the term: from ``facts`` if the page read them (``wanted``),
    else in a statement of their own. Either way from where the page reads
    (``peerrevenue.replicas``): a trader who just traded reads the primary until a replica has
    the trade."""
    if facts is not None:
        found = facts[FACT, slug, user.pk]
    else:
        rows = prepared_rows(
            f"SELECT ({fact_sql()})", [slug, user.pk], using=replicas.reading_connection()
        )
        found = rows[0][0]  # a SELECT of one scalar subquery: always one row
    if found is None:  # a user from before the market: open the account, holding nothing
        follow = notices.following(user=user, term_id=term_id)
        return Reader(balance(user), 0, follow.threshold_bp if follow else None, False)
    cash, held, threshold, has_orders = found
    return Reader(cash, held or 0, threshold, has_orders)
