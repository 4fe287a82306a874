"""Why the market refuses a trade or a transfer: the exceptions every market write raises.

Each message tells the person what to do about it. ``market.trading`` re-exports them: scripts
and checks outside the project import them from there.
"""

from __future__ import annotations

from .models import Term


class TradeError(Exception):
    """A refused trade or transfer. The message tells the person what to do about it."""


class InsufficientCash(TradeError):
    pass


class InsufficientShares(TradeError):
    pass


class Slippage(TradeError):
    """The price moved past the trader's limit (max_cost / min_proceeds, fee included)."""


class TermNotTradable(TradeError):
    pass


class InvalidQuantity(TradeError):
    pass


class InvalidRequest(TradeError):
    """A malformed request other than the quantity, e.g. a missing idempotency key."""


NO_SUCH_TERM = "That term does not exist (any more); pick one from the market."


def untradable(term: Term) -> TermNotTradable | None:
    """Why ``term`` cannot be traded now, or None when it can."""
    if term.status == Term.Status.HALTED:
        reason = f" ({term.status_reason.strip().rstrip('.')})" if term.status_reason else ""
        return TermNotTradable(
            f"Trading in “{term.phrase}” is halted{reason}. "
            "Your holdings are safe; try again when it is relisted."
        )
    if term.status != Term.Status.LISTED:
        return TermNotTradable(
            f"“{term.phrase}” is delisted and can no longer be traded."
            + (f" Reason: {term.status_reason}" if term.status_reason else "")
        )
    return None


# The per-trader trade limit's refusal (the web's trade and order forms, the API).
TOO_FAST = (
    "You are trading too fast: at most {limit:,} trades every {minutes} minutes. "
    "Nothing was traded; wait a little and try again."
)
