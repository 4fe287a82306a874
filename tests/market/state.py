"""The market's state as a refusal must leave it: balances, holdings, terms and the ledger."""

from __future__ import annotations

import datetime as dt

from market.models import Account, Entry, Holding, LedgerTransaction, Term, Trade
from papers.calendar import announced_at


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
    """Move every term's listing and every trade so far to before listing day ``date`` was
    announced: the shares held now are then the shares held at the announcement, and its
    papers pay them (tests that set up a day in the past call this after trading)."""
    instant = announced_at(date)
    Term.objects.filter(listed_at__gt=instant - dt.timedelta(days=1)).update(
        listed_at=instant - dt.timedelta(days=1)
    )
    Trade.objects.filter(created_at__gt=instant - dt.timedelta(hours=1)).update(
        created_at=instant - dt.timedelta(hours=1)
    )
