"""The market's state as a refusal must leave it: balances, holdings, terms and the ledger."""

from __future__ import annotations

from market.models import Account, Entry, Holding, LedgerTransaction, Term, Trade


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
