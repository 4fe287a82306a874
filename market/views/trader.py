"""The reader's own part of the term and quote pages (cash, holding, orders on the term,
follow, the "Sell all" button) and an order in plain words: rendered for each request,
never kept."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from peerrevenue import keep

from .. import notices, orders, trade_box
from ..forms import EXPIRY_CHOICES, SIDE_CHOICES
from ..models import Order
from ..models.orders import describe
from ..units import format_credits, format_shares


def trader_context(
    request: HttpRequest,
    *,
    term_id: int,
    slug: str,
    price: int,
    facts: keep.Facts | None = None,
) -> dict:
    """The reader's cash and holding, orders on the term and follow: rendered on every
    request in the trade box, never in a kept piece (from ``facts`` when the page read them
    with its others)."""
    if not request.user.is_authenticated:
        return {}
    box = trade_box.reader(user=request.user, term_id=term_id, slug=slug, facts=facts)
    lines = (
        [order_line(o) for o in orders.orders_of(user=request.user, term_id=term_id, limit=10)]
        if box.has_orders
        else []
    )
    return {
        "cash": box.cash,
        "held": box.held,
        "orders": lines,
        "follow": (
            {"threshold_bp": box.follow_threshold_bp}
            if box.follow_threshold_bp is not None
            else None
        ),
        "thresholds": [(bp, notices.percent(bp)) for bp in notices.THRESHOLDS],
        # Written out in the template rather than rendered by the form's widgets, which cost
        # more than the rest of the trade box.
        "order_sides": SIDE_CHOICES,
        "order_limit": format_credits(price, unit=False).replace(",", ""),
        "order_expiries": EXPIRY_CHOICES,
        "order_key": uuid.uuid4().hex,
    }


@dataclass(frozen=True, slots=True)
class OrderLine:
    """An order as the trade box and the portfolio show it, in plain words."""

    order: Order
    summary: str  # "Buy up to 10 shares of “KV cache” at most 1.20 credits a share"
    state: str  # "Waiting", "Filled", "Cancelled", "Expired"
    progress: str  # "4 of 10 filled in 2 fills; 6 waiting"
    reason: str
    expires: str
    fills: list[str]


def order_line(order: Order) -> OrderLine:
    words = orders.state_words(order)
    fills = (
        [
            f"{format_shares(f.trade.shares)} for {format_credits(f.trade.total)} "
            f"(fee {format_credits(f.trade.fee, unit=False)}), "
            f"{timezone.localtime(f.trade.created_at):%-d %b %H:%M}"
            for f in sorted(order.fill_rows.all(), key=lambda f: f.number)  # prefetched
        ]
        if order.fills
        else []
    )
    progress = f"{order.filled:,} of {format_shares(order.shares)} filled"
    if order.fills:
        progress += f" in {order.fills:,} fill{'s' if order.fills != 1 else ''}"
    if words == "waiting":
        progress += f"; {format_shares(order.remaining)} waiting"
    expires = ""
    if order.expires_at and words == "waiting":
        expires = f"Waits until {timezone.localtime(order.expires_at):%-d %b %H:%M} UTC"
    return OrderLine(
        order=order,
        summary=describe(order, order.term.phrase),
        state=words.capitalize(),
        progress=progress,
        reason=order.reason,
        expires=expires,
        fills=fills,
    )


def sell_all(held: int) -> str:
    """The quote form's "Sell all" button, for a reader who holds ``held`` shares."""
    if not held:
        return ""
    return format_html(
        '<button type="submit" name="preset" value="all" class="button button--quiet">'
        "Sell all {}</button>",
        f"{held:,}",
    )
