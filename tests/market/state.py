"""The market's state as a refusal must leave it: balances, holdings, terms and the ledger."""

from __future__ import annotations

import datetime as dt

from market.models import Account, Entry, Holding, LedgerTransaction, Term, Trade
from papers.calendar import submission_period_start


def market_state() -> dict:
    """Everything a refusal must leave untouched."""
    return {
        "accounts": list(Account.objects.order_by("pk").values_list("pk", "cash")),
        "holdings": list(Holding.objects.order_by("pk").values_list("pk", "shares")),
        "terms": list(
            Term.objects.order_by("pk").values_list("pk", "supply", "reserve", "version", "status")
        ),
        "trades": Trade.objects.count(),
        "transactions": LedgerTransaction.objects.count(),
        "entries": Entry.objects.count(),
    }


def held_before_the_announcement(date: dt.date) -> None:
    """Move every term's listing and every trade so far to before the submission period of
    listing day ``date`` began (the window of its papers that came with no submission time): the
    shares held now are then held through the window, and its papers pay them (tests that set
    up a day in the past call this after trading)."""
    opens = submission_period_start(date)
    Term.objects.filter(listed_at__gt=opens - dt.timedelta(days=1)).update(
        listed_at=opens - dt.timedelta(days=1)
    )
    Trade.objects.filter(created_at__gt=opens - dt.timedelta(hours=1)).update(
        created_at=opens - dt.timedelta(hours=1)
    )
