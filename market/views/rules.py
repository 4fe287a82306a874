"""The rules page: ``market/rules.md`` filled with the real settings and default curve."""

from __future__ import annotations

import string
from pathlib import Path

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from .. import curve, rulebook
from ..models import DEFAULT_K, DEFAULT_P0
from ..units import format_credits

RULES_FILE = Path(__file__).parent.parent / "rules.md"


def _percent(basis_points: int) -> str:
    return f"{basis_points / 100:g}%"


def rules_values() -> dict[str, str]:
    """The numbers on the rules page, from the real settings and default curve."""
    p0, k, bp = DEFAULT_P0, DEFAULT_K, settings.MARKET_FEE_BASIS_POINTS
    buy = 10
    cost = curve.cost(0, buy, p0=p0, k=k)
    buy_fee = curve.fee(cost, basis_points=bp)
    back = curve.proceeds(buy, buy, p0=p0, k=k)
    back_fee = curve.fee(back, basis_points=bp)
    later_supply = 100
    later_cost = curve.cost(later_supply, buy, p0=p0, k=k)
    later_fee = curve.fee(later_cost, basis_points=bp)
    dividend = settings.MARKET_DIVIDEND_PER_MENTION
    return {
        "grant": format_credits(settings.MARKET_STARTING_GRANT),
        "p0": format_credits(p0),
        "k": format_credits(k),
        "fee": _percent(bp),
        "example_shares": str(buy),
        "example_cost": format_credits(cost),
        "example_fee": format_credits(buy_fee),
        "example_total": format_credits(cost + buy_fee),
        "example_average": format_credits((2 * cost + buy) // (2 * buy)),
        "example_price_after": format_credits(curve.price(buy, p0=p0, k=k)),
        "example_last_share": format_credits(curve.price(buy - 1, p0=p0, k=k)),
        "example_back": format_credits(back),
        "example_back_fee": format_credits(back_fee),
        "example_back_total": format_credits(back - back_fee),
        "example_round_trip": format_credits(buy_fee + back_fee),
        "later_supply": str(later_supply),
        "later_price": format_credits(curve.price(later_supply, p0=p0, k=k)),
        "later_total": format_credits(later_cost + later_fee),
        "dividend": format_credits(dividend),
        "dividend_ten": format_credits(dividend * buy),
        "max_shares": f"{settings.MARKET_MAX_SHARES_PER_TRADE:,}",
        "trades_per_window": f"{settings.RATELIMIT_TRADES_PER_WINDOW:,}",
        "window_minutes": str(max(settings.RATELIMIT_WINDOW_SECONDS // 60, 1)),
        "max_open_orders": f"{settings.MARKET_MAX_OPEN_ORDERS:,}",
        "fills_per_pass": f"{settings.MARKET_ORDER_FILLS_PER_PASS:,}",
        "window_ana": format_credits(dividend * 10),
        "window_cy": format_credits(dividend * 4),
        "rulebook": RULEBOOK_MARK,
    }


# Where the rulebook (market/rulebook.py, rendered by its own template) goes in the Markdown.
RULEBOOK_MARK = "\n\n<!-- the rulebook -->\n\n"


def rules_markdown() -> str:
    return string.Template(RULES_FILE.read_text(encoding="utf-8")).substitute(rules_values())


@require_GET
def rules(request: HttpRequest) -> HttpResponse:
    before, after = rules_markdown().split(RULEBOOK_MARK)
    context = {
        "rules": before,
        "rules_after": after,
        "rulebook": rulebook.shown(),
        "nav": "market",
    }
    return render(request, "market/rules.html", context)
