"""The market app's models, one module per concept, all importable from here.

``terms`` a term on its curve; ``accounts`` cash, holdings and daily worth; ``ledger`` the
double-entry transactions and their entries; ``trades``; ``dividends`` mentions and the
dividend each pays; ``orders`` limit orders and their fills; ``notices`` follows and notices;
``proposals`` phrases proposed for listing.

Amounts are integer micro-credits (µ¢) and whole shares in 64-bit columns. The cached numbers
(``Account.cash``, ``Holding.shares``, ``Term.supply`` and ``Term.reserve``) are changed only by
``market.trading``; ``manage.py check_ledger`` proves they equal the ledger.
"""

from .accounts import Account, AccountQuerySet, Holding, NetWorthSnapshot
from .dividends import DividendEvent, Mention, WithheldDividend
from .ledger import Entry, LedgerTransaction
from .notices import Follow, Notice
from .orders import Order, OrderFill
from .proposals import TermProposal
from .terms import DEFAULT_K, DEFAULT_P0, TERM_PAGES, Term, TermQuerySet, slug_is_reserved
from .trades import Trade

__all__ = [
    "DEFAULT_K",
    "DEFAULT_P0",
    "TERM_PAGES",
    "Account",
    "AccountQuerySet",
    "DividendEvent",
    "Entry",
    "Follow",
    "Holding",
    "LedgerTransaction",
    "Mention",
    "NetWorthSnapshot",
    "Notice",
    "Order",
    "OrderFill",
    "Term",
    "TermProposal",
    "TermQuerySet",
    "Trade",
    "WithheldDividend",
    "slug_is_reserved",
]
