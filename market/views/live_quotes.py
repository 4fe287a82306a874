"""What the pages' scripts ask for while a reader looks: every term's ticker, a live quote
(quote.js) and a highlighted word's popover offers (terms.js). JSON, never kept."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.middleware.csrf import get_token
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from peerrevenue.ratelimit import client_address, is_limited
from peerrevenue.redirects import safe_next

from .. import trading
from ..cash import cash_and_holding
from ..forms import QuoteForm
from ..models import Term, Trade
from ..templatetags.market_pages import trend
from ..tickers import current_tickers
from ..units import MINUS, format_credits, format_shares
from .quotes import price_request
from .term import get_term_or_404

QUOTING_TOO_FAST = (
    "You are asking for quotes too fast: at most {limit:,} live quotes every {minutes} "
    "minutes. Wait a little, or press “Get a quote”."
)


@require_GET
def tickers_json(request: HttpRequest) -> JsonResponse:
    """Every listed term's price and day change, for the popover on highlighted words
    (static/js/terms.js asks once per page, on the first word a reader points at)."""
    terms = {
        ticker.slug: {
            "phrase": ticker.phrase,
            "price": format_credits(ticker.price),
            "change": f"{ticker.change_text.replace('-', MINUS)} today",
            "trend": trend(ticker.change_bp, "bp"),
            "url": reverse("market:term", args=[ticker.slug]),
        }
        for ticker in current_tickers(request).values()
    }
    return _json({"terms": terms})


def _quoting_too_fast(request: HttpRequest) -> JsonResponse | None:
    """The 429 for a reader past the quote limit (live quotes and popover offers count alike),
    or None. Signed-in traders count alone, so people sharing an address do not use up each
    other's quotes; everyone else counts by address."""
    who = f"user:{request.user.pk}" if request.user.is_authenticated else client_address(request)
    if is_limited(
        "quote",
        who,
        limit=settings.RATELIMIT_QUOTES_PER_WINDOW,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
    ):
        message = QUOTING_TOO_FAST.format(
            limit=settings.RATELIMIT_QUOTES_PER_WINDOW,
            minutes=max(settings.RATELIMIT_WINDOW_SECONDS // 60, 1),
        )
        return _json({"ok": False, "error": message}, status=429)
    return None


@require_GET
def quote_json(request: HttpRequest, slug: str) -> JsonResponse:
    """The live quote for quote.js: numbers in µ¢ plus the same words the pages show."""
    refused = _quoting_too_fast(request)
    if refused is not None:
        return refused
    term = get_term_or_404(slug)
    form = QuoteForm(request.GET)
    if not form.is_valid():
        errors = [str(e) for field_errors in form.errors.values() for e in field_errors]
        return _json({"ok": False, "error": " ".join(errors)}, status=400)
    try:
        priced = price_request(term=term, user=request.user, **form.order())
    except trading.TradeError as exc:
        return _json({"ok": False, "error": str(exc)}, status=409)
    q = priced.quote
    buying = q.side == Trade.Side.BUY
    return _json(
        {
            "ok": True,
            "side": q.side,
            "shares": q.shares,
            "amount": q.amount,
            "fee": q.fee,
            "total": q.total,
            "average_price": q.average_price,
            "price_after": q.price_after,
            "note": priced.note,
            "problem": priced.quote.problem if priced else "",
            "text": {
                "summary": f"{'Buying' if buying else 'Selling'} {format_shares(q.shares)}: "
                f"{'you pay' if buying else 'you receive'} {format_credits(q.total)}",
                "amount": format_credits(q.amount, exact=True),
                "fee": format_credits(q.fee, exact=True),
                "total": format_credits(q.total),
                "average_price": format_credits(q.average_price, exact=True),
                "price_after": format_credits(q.price_after),
            },
        }
    )


# The sizes a highlighted word's popover offers to buy (and, up to what is held, to sell).
POPOVER_SHARES = (1, 3, 10)


def _offer(term: Term, *, side: str, shares: int, user) -> dict | None:
    """One button of the popover: the live quote and what its confirm form posts."""
    try:
        q = trading.quote(term=term, side=side, shares=shares, user=user)
    except trading.TradeError:
        return None
    buying = side == Trade.Side.BUY
    verb = "Buy" if buying else "Sell"
    unit = "share" if shares == 1 else "shares"
    fee = format_credits(q.fee, exact=True)
    return {
        "side": side,
        "shares": shares,
        "total": q.total,
        "fee": q.fee,
        # The confirm trades at most at the price shown: a move in between is refused, not paid.
        "limit": q.total,
        "key": uuid.uuid4().hex,
        "problem": q.problem,
        "text": {
            "button": f"{verb} {shares}",
            # The button's figure; the words between (``between``, then " credits") are there
            # for screen readers only: its name is its visible text with them, "Buy 3 shares
            # for 9.85 credits", and no aria-label hides what a sighted reader sees.
            "total": format_credits(q.total).removesuffix(" credits"),
            "between": f" {unit} for " if buying else f" {unit}, receive ",
            "detail": f"{shares} {unit} at {format_credits(q.average_price, exact=True)} on "
            f"average, fee {fee}: {'you pay' if buying else 'you receive'} "
            f"{format_credits(q.total)}",
        },
    }


@require_GET
def offer_json(request: HttpRequest, slug: str) -> JsonResponse:
    """What a highlighted word's popover shows (static/js/terms.js): the term's live price and,
    for a signed-in trader, buttons that buy or sell a few shares at a live quote in one
    confirm. Asked on each opening, never kept: it is the reader's own (cash, holding, CSRF)."""
    refused = _quoting_too_fast(request)
    if refused is not None:
        return refused
    term = get_term_or_404(slug)
    ticker = current_tickers(request).get(term.pk)
    back = safe_next(request)
    data: dict = {
        "ok": True,
        "phrase": term.phrase,
        "url": term.get_absolute_url(),
        "price": format_credits(term.price),
        "change": f"{ticker.change_text.replace('-', MINUS)} today" if ticker else "",
        "trend": trend(ticker.change_bp, "bp") if ticker else "flat",
        "tradable": term.is_tradable,
        "signed_in": request.user.is_authenticated,
    }
    if not request.user.is_authenticated:
        query = f"?{urlencode({'next': back})}" if back else ""
        login, signup = reverse("login") + query, reverse("signup") + query
        data["start"] = {
            "text": f"Log in or sign up to trade “{term.phrase}”: new traders get "
            f"{format_credits(settings.MARKET_STARTING_GRANT)} of play money.",
            "login": login,
            "signup": signup,
        }
        return _json(data)
    cash, held = cash_and_holding(user=request.user, term_id=term.pk)
    data["held"] = f"You hold {format_shares(held)}" if held else "You hold none"
    data["cash"] = f"cash {format_credits(cash)}"
    offers = []
    if term.is_tradable:
        for shares in POPOVER_SHARES:
            offers.append(_offer(term, side=Trade.Side.BUY, shares=shares, user=request.user))
        sizes = [n for n in POPOVER_SHARES if n < held] + ([held] if held else [])
        for shares in sizes[:3]:
            offers.append(_offer(term, side=Trade.Side.SELL, shares=shares, user=request.user))
    data["offers"] = [offer for offer in offers if offer is not None]
    data["trade_url"] = reverse("market:trade", args=[term.slug])
    data["next"] = back
    data["csrf"] = get_token(request)
    return _json(data)


def _json(data: dict, *, status: int = 200) -> JsonResponse:
    response = JsonResponse(data, status=status)
    response["Cache-Control"] = "no-store"
    return response
