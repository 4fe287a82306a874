"""What a term page's trade box shows the signed-in reader: read on every request (never kept),
so in one statement: their cash, their holding of the term, their follow of it, and whether
they have orders on it. Their orders themselves are read only when they have some."""

from __future__ import annotations

from dataclasses import dataclass

from peerrevenue import replicas

from . import notices
from .cash import balance
from .models import Account, Holding
from .notice_models import Follow
from .order_book import Order


@dataclass(frozen=True, slots=True)
class Reader:
    cash: int  # µ¢
    held: int  # shares of the term
    follow_threshold_bp: int | None  # None: not following
    has_orders: bool  # any order on the term, waiting or done


_SQL = (
    f"SELECT a.cash,"  # noqa: S608 - table names only
    f" (SELECT h.shares FROM {Holding._meta.db_table} h"
    "   WHERE h.account_id = a.id AND h.term_id = %(term)s),"
    f" (SELECT f.threshold_bp FROM {Follow._meta.db_table} f"
    "   WHERE f.user_id = a.user_id AND f.term_id = %(term)s),"
    f" EXISTS (SELECT 1 FROM {Order._meta.db_table} o"
    "   WHERE o.account_id = a.id AND o.term_id = %(term)s)"
    f" FROM {Account._meta.db_table} a WHERE a.user_id = %(user)s"
)


def reader(*, user, term_id: int) -> Reader:
    # From where the page reads (peerrevenue.replicas): a trader who just traded reads the
    # primary until a replica has the trade.
    with replicas.reading_connection().cursor() as cursor:
        cursor.execute(_SQL, {"term": term_id, "user": user.pk})
        found = cursor.fetchone()
    if found is None:  # a user from before the market: open the account, holding nothing
        follow = notices.following(user=user, term_id=term_id)
        return Reader(balance(user), 0, follow.threshold_bp if follow else None, False)
    cash, held, threshold, has_orders = found
    return Reader(cash, held or 0, threshold, has_orders)
