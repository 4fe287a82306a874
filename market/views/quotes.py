"""Quote and trade without JavaScript. Buying is three steps: the term page's form asks for a
quote (GET ``quote/``), the quote page shows the price with a confirm form carrying the quoted
total as a limit and a fresh idempotency key, and the confirm POSTs to ``trade/``, which
trades and redirects back to the term page (post/redirect/get). A repeated confirm carries
the same key, so trading returns the first trade instead of making a second one."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from peerrevenue import metrics
from peerrevenue.ratelimit import is_limited
from peerrevenue.redirects import safe_next

from .. import curve, trading
from ..forms import BUY_MAX, QuoteForm, TradeForm
from ..models import Term, Trade
from ..units import format_credits, format_shares
from .term import get_term_or_404
from .trader import sell_all, trader_context

TOO_FAST = (
    "You are trading too fast: at most {limit:,} trades every {minutes} minutes. "
    "Nothing was traded; wait a little and try again."
)


def trade_message(trade: Trade) -> str:
    """``Bought 5 shares of KV cache for 5.15 credits (fee 0.05)``: the total is what left
    (buy) or reached (sell) the trader's cash, fee included."""
    verb = "Bought" if trade.side == Trade.Side.BUY else "Sold"
    return (
        f"{verb} {format_shares(trade.shares)} of {trade.term.phrase} for "
        f"{format_credits(trade.total)} (fee {format_credits(trade.fee, unit=False)})"
    )


@dataclass(frozen=True, slots=True)
class PricedRequest:
    quote: trading.Quote
    note: str = ""  # e.g. how a budget became shares


def price_request(
    *,
    term: Term,
    side: str,
    shares: int | None = None,
    budget: int | None = None,
    preset: str | None = None,
    user=None,
) -> PricedRequest:
    """Quote ``shares``, or for a buy with a ``budget`` (µ¢, fee included) the most shares it
    pays for, for ``user`` if signed in. ``preset`` "max" buys all that the trader's cash pays
    for and "all" sells every share they hold. Raises ``trading.TradeError`` with a message."""
    note = ""
    if preset:
        if user is None or not user.is_authenticated:
            raise trading.InvalidRequest("Log in to buy the most your cash allows or sell all.")
        if preset == BUY_MAX:
            budget = trading.balance(user)
        else:
            shares = trading.holding(user, term)
            if shares == 0:
                raise trading.InvalidQuantity(f"You hold no shares of “{term.phrase}” to sell.")
            limit = settings.MARKET_MAX_SHARES_PER_TRADE
            if shares > limit:
                note = f"You hold {format_shares(shares)}; a trade has at most {limit:,}, "
                note += "so this quote sells that many."
                shares = limit
    if budget is not None:
        fee_bp = settings.MARKET_FEE_BASIS_POINTS
        shares = curve.shares_for_total(
            term.supply, budget, p0=term.p0, k=term.k, basis_points=fee_bp
        )
        if shares == 0:
            one = curve.cost(term.supply, 1, p0=term.p0, k=term.k)
            raise trading.InvalidQuantity(
                f"{format_credits(budget)} does not buy one share of “{term.phrase}”: the next "
                f"share costs {format_credits(one + curve.fee(one, basis_points=fee_bp))} "
                "with the fee."
            )
        note = f"{format_credits(budget)} buys at most {format_shares(shares)} now."
        if preset == BUY_MAX:
            note = f"Your cash, {format_credits(budget)}, buys at most {format_shares(shares)} now."
        limit = settings.MARKET_MAX_SHARES_PER_TRADE
        if shares > limit:
            shares = limit
            note = f"{format_credits(budget)} would buy more than {limit:,} shares, the most a "
            note += f"trade can have; this quote is for {limit:,}."
    if shares is None:
        raise trading.InvalidRequest("Say how many shares, or how much to spend.")
    signed_in = user if user is not None and user.is_authenticated else None
    return PricedRequest(
        quote=trading.quote(term=term, side=side, shares=shares, user=signed_in), note=note
    )


def _error_messages(form: TradeForm) -> list[str]:
    # Several tampered fields give the same sentence; say it once.
    return list(dict.fromkeys(str(e) for errors in form.errors.values() for e in errors))


def _render_quote(
    request: HttpRequest,
    term: Term,
    *,
    form: QuoteForm,
    priced: PricedRequest | None = None,
    error: str = "",
    confirm_form: TradeForm | None = None,
    attempted: bool = False,
    status: int = 200,
) -> HttpResponse:
    """The quote page; ``attempted`` says the refusal shown is of a trade, not of a quote."""
    trader = trader_context(request, term_id=term.pk, slug=term.slug, price=term.price)
    context = {
        "term": term,
        "form": form,
        "priced": priced,
        "quote": priced.quote if priced else None,
        "error": error,
        "problem": priced.quote.problem if priced else "",
        "confirm_errors": _error_messages(confirm_form) if confirm_form is not None else [],
        "attempted": attempted,
        # A fresh key for every confirm form shown: a repeat of *this* confirm is one trade.
        "key": uuid.uuid4().hex,
        "max_shares": settings.MARKET_MAX_SHARES_PER_TRADE,
        "nav": "market",
        **trader,
        # The quote form's place for the button that the term page fills the same way.
        "places": {"sell_all": sell_all(trader.get("held", 0))},
    }
    response = render(request, "market/quote.html", context, status=status)
    # Going back to a quote must show the same key, not mint a new one, and never a stale price
    # from a shared cache.
    response["Cache-Control"] = "private, no-cache"
    return response


@require_http_methods(["GET", "HEAD", "POST"])
def quote(request: HttpRequest, slug: str) -> HttpResponse:
    term = get_term_or_404(slug)
    # No parameters at all (a bookmarked or typed URL): an empty order form, not errors.
    form = QuoteForm((request.POST if request.method == "POST" else request.GET) or None)
    if not form.is_bound:
        return _render_quote(request, term, form=form)
    if not form.is_valid():
        return _render_quote(request, term, form=form, status=400)
    order = form.order()
    if order["preset"]:
        # The button chose the side (the portfolio's Buy max sends none, the term page's may
        # send the other): the form shown under the quote says which.
        form = QuoteForm(initial={"side": order["side"]})
    try:
        priced = price_request(term=term, user=request.user, **order)
    except trading.TradeError as exc:
        return _render_quote(request, term, form=form, error=str(exc), status=409)
    return _render_quote(request, term, form=form, priced=priced)


@require_POST
def trade(request: HttpRequest, slug: str) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(reverse("market:term", args=[slug]))
    term = get_term_or_404(slug)
    # Unbound, so that a refusal shows the order again without judging it a second time.
    form = QuoteForm(
        initial={"side": request.POST.get("side"), "shares": request.POST.get("shares", "")[:30]}
    )
    if is_limited(
        "trade",
        str(request.user.pk),
        limit=settings.RATELIMIT_TRADES_PER_WINDOW,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
    ):
        metrics.TRADE_REFUSALS.labels("rate_limit").inc()
        message = TOO_FAST.format(
            limit=settings.RATELIMIT_TRADES_PER_WINDOW,
            minutes=max(settings.RATELIMIT_WINDOW_SECONDS // 60, 1),
        )
        return _render_quote(request, term, form=form, error=message, attempted=True, status=429)
    confirm = TradeForm(request.POST)
    if not confirm.is_valid():
        return _render_quote(
            request, term, form=form, confirm_form=confirm, attempted=True, status=400
        )
    data = confirm.cleaned_data
    try:
        done = trading.trade(
            user=request.user,
            term=term,
            side=data["side"],
            shares=data["shares"],
            limit=data["limit"],
            key=data["key"],
        )
    except trading.TradeError as exc:
        metrics.TRADE_REFUSALS.labels(type(exc).__name__).inc()
        # Show the refusal next to a fresh quote for the same order, if there is one.
        try:
            priced = price_request(
                term=term, side=data["side"], shares=data["shares"], user=request.user
            )
        except trading.TradeError:
            priced = None
        return _render_quote(
            request, term, form=form, priced=priced, error=str(exc), attempted=True, status=409
        )
    if done.repeated:
        # The same confirmation again (back button, a second click): the key kept the money
        # safe; say so rather than announce the trade a second time.
        return render(
            request,
            "market/already_placed.html",
            {"term": term, "trade": done, "summary": trade_message(done), "nav": "market"},
        )
    metrics.TRADES.labels(data["side"]).inc()
    messages.success(request, trade_message(done))
    # From a highlighted word's popover: back to the page the word is on.
    return redirect(safe_next(request) or done.term)
