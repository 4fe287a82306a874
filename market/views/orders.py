"""Limit orders and follows from the term page, its popover and the portfolio: thin views that
parse the form, call ``market.trading`` / ``market.notices`` and redirect back (post/redirect/
get), saying what happened in the page's messages."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from peerrevenue.ratelimit import is_limited, refuse_if_signed_out_or_too_many
from peerrevenue.redirects import safe_next

from .. import notices, orders, trading
from ..forms import OrderForm
from ..models import Order, Term, Trade
from ..models.orders import describe, filled_so_far
from ..units import format_credits, format_shares
from .quotes import TOO_FAST
from .term import get_term_or_404


def _back(request: HttpRequest, default: str) -> HttpResponse:
    return redirect(safe_next(request) or default)


def _too_fast(request: HttpRequest) -> bool:
    return is_limited(
        "trade",
        str(request.user.pk),
        limit=settings.RATELIMIT_TRADES_PER_WINDOW,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
    )


def _waits(shares: int) -> str:
    return f"{format_shares(shares)} {'waits' if shares == 1 else 'wait'}"


def placed_message(order: Order, phrase: str) -> str:
    """What placing ``order`` did, in one message. What filled at once is given as the price
    a share on the curve and the fee beside it: the price is what the limit bounds, and it
    visibly held ("at most 1.25 … at 1.25 a share, plus 0.01 fee"), where a total with the fee
    in it would read as a broken limit."""
    what = describe(order, phrase)
    if not order.filled:
        if order.state == Order.State.CANCELLED:
            return f"{what}: cancelled. {order.reason}"
        return f"{what}: waiting for the price to reach your limit."
    done = filled_so_far(order)
    verb = "bought" if order.side == Trade.Side.BUY else "sold"
    traded = (
        f"{verb} {format_shares(done.shares)} at once, at "
        f"{format_credits(done.average_price, exact=True)} a share"
        + (" on average" if done.shares > 1 else "")
        + f", plus a fee of {format_credits(done.fee, exact=True)}"
    )
    if order.state == Order.State.FILLED:
        return f"{what}: filled; {traded}."
    if order.state == Order.State.CANCELLED:
        return f"{what}: {traded}, then it was cancelled. {order.reason}"
    return f"{what}: {traded}; the other {_waits(order.remaining)} for the price."


@require_POST
def place(request: HttpRequest, slug: str) -> HttpResponse:
    term = get_term_or_404(slug)
    if not request.user.is_authenticated:
        return redirect_to_login(term.get_absolute_url())
    # Whatever happened, back to the order box (the form's ``next``), where it is said.
    back = f"{term.get_absolute_url()}#order-form"
    if _too_fast(request):
        messages.error(
            request,
            TOO_FAST.format(
                limit=settings.RATELIMIT_TRADES_PER_WINDOW,
                minutes=max(settings.RATELIMIT_WINDOW_SECONDS // 60, 1),
            ),
        )
        return _back(request, back)
    form = OrderForm(request.POST)
    if not form.is_valid():
        for errors in form.errors.values():
            for error in dict.fromkeys(errors):
                messages.error(request, f"Order not placed: {error}")
        return _back(request, back)
    data = form.cleaned_data
    seconds = form.expiry_seconds()
    try:
        order = trading.place_order(
            user=request.user,
            term=term,
            side=data["side"],
            shares=data["shares"],
            limit_price=data["limit"],
            expires_at=timezone.now() + dt.timedelta(seconds=seconds) if seconds else None,
            key=data["key"],
        )
    except trading.TradeError as exc:
        messages.error(request, f"Order not placed: {exc}")
        return _back(request, back)
    if getattr(order, "repeated", False):
        messages.info(request, "That order was already placed; it is listed below.")
    else:
        messages.success(request, placed_message(order, term.phrase))
        # The fills made at once wrote their notices too: this message has told them.
        notices.mark_order_told(order=order)
    return _back(request, back)


@require_POST
def cancel(request: HttpRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("market:portfolio"))
    order_id = request.POST.get("order", "")
    if not order_id.isascii() or not order_id.isdigit() or len(order_id) > 18:
        raise Http404("You have no such order.")
    order = Order.objects.filter(pk=int(order_id), account__user=request.user).first()
    if order is None:
        raise Http404("You have no such order.")
    phrase = Term.objects.values_list("phrase", flat=True).get(pk=order.term_id)
    try:
        done = trading.cancel_order(user=request.user, order=order)
    except orders.OrderClosed as exc:
        messages.info(request, str(exc))
    except trading.TradeError as exc:
        messages.error(request, str(exc))
    else:
        filled = f" ({format_shares(done.filled)} had filled)" if done.filled else ""
        messages.success(request, f"Cancelled: {describe(done, phrase)}{filled}.")
    return _back(request, reverse("market:portfolio"))


@require_POST
def follow(request: HttpRequest, slug: str) -> HttpResponse:
    term = get_term_or_404(slug)
    # Following is to terms what watching is to categories: one budget for both kinds.
    refused = refuse_if_signed_out_or_too_many(
        request,
        scope="follow",
        limit=settings.RATELIMIT_WATCHES_PER_WINDOW,
        done="followed or unfollowed a term",
        back=term.get_absolute_url(),
    )
    if refused is not None:
        return refused
    if request.POST.get("action") == "unfollow":
        notices.unfollow(user=request.user, term=term)
        messages.success(request, f"You no longer follow “{term.phrase}”.")
        return _back(request, term.get_absolute_url())
    try:
        threshold = int(
            request.POST.get("threshold") or settings.MARKET_FOLLOW_THRESHOLD_BASIS_POINTS
        )
        notices.follow(user=request.user, term=term, threshold_bp=threshold)
    except ValueError as exc:
        messages.error(request, str(exc))
        return _back(request, term.get_absolute_url())
    messages.success(
        request,
        f"You follow “{term.phrase}”: you will be told when it moves more than "
        f"{notices.percent(threshold)}, when it pays a dividend, and about your orders.",
    )
    return _back(request, term.get_absolute_url())
