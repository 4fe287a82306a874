"""Acting on the market with a token: quote, trade, place and cancel limit orders, follow
terms, and read one's own account and orders.

Each endpoint calls the one domain function the web calls (``market.trading``,
``market.orders`` through it, ``market.notices``), so the refusals are the web's, in its
words, and the idempotency key is the web's: a program sends ``Idempotency-Key`` and a retry
with that key gets the trade or order the first request made (200, ``repeated: true``)
instead of a second one. The web's per-trader trade limit counts API trades too.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from ninja import Header

from market import notices, orders, trading
from market.cash import balance
from market.models import Holding, Order, Term, Trade
from market.orders import state_words
from market.refusals import TOO_FAST
from peerrevenue import metrics
from peerrevenue.ratelimit import is_limited

from . import action_schemas as schemas
from . import auth, conditional, market_endpoints
from .problems import Problem

# The market's router, not one of its own: a path read there and written here
# (/terms/{slug}/trades) must be one view, or the first registered would answer 405.
router = market_endpoints.router
TAGS = ["acting"]

KEY_HELP = "Your idempotency key for this trade: a retry with the same key trades once."


def _term(slug: str) -> Term:
    term = Term.objects.filter(slug=slug).first()
    if term is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    return term


def _too_fast(user) -> None:
    if is_limited(
        "trade",
        str(user.pk),
        limit=settings.RATELIMIT_TRADES_PER_WINDOW,
        window_seconds=settings.RATELIMIT_WINDOW_SECONDS,
    ):
        metrics.TRADE_REFUSALS.labels("rate_limit").inc()
        raise Problem(
            429,
            TOO_FAST.format(
                limit=settings.RATELIMIT_TRADES_PER_WINDOW,
                minutes=max(settings.RATELIMIT_WINDOW_SECONDS // 60, 1),
            ),
            headers={"Retry-After": str(settings.RATELIMIT_WINDOW_SECONDS)},
        )


def _key(key: str | None) -> str:
    if key is None or not key.strip():
        raise Problem(
            400,
            "Send an Idempotency-Key header (1 to 100 characters, new for each trade or "
            "order) so that a retried request is not traded twice. Nothing was done.",
        )
    return key.strip()


def _keyed(request: HttpRequest, slug: str, idempotency_key: str | None) -> tuple[Any, Term, str]:
    """A trade's or an order's checks, in the order a program is told of them: the term, the
    idempotency key, then the per-trader trade limit (which a refused request does not use)."""
    user = auth.token_of(request).user
    term = _term(slug)
    key = _key(idempotency_key)
    _too_fast(user)
    return user, term, key


def _repeated(done: Trade | Order) -> bool:
    # The domain marks what it found by the key (a retry) instead of making it again.
    return bool(getattr(done, "repeated", False))


def _trade_out(trade: Trade, slug: str) -> schemas.TradeOut:
    return schemas.TradeOut(
        id=trade.pk,
        term=slug,
        side=trade.side,
        shares=trade.shares,
        amount=trade.amount,
        fee=trade.fee,
        total=trade.total,
        price_before=trade.price_before,
        price_after=trade.price_after,
        at=trade.created_at,
        key=trade.key,
        repeated=_repeated(trade),
    )


def _order_out(order: Order) -> schemas.OrderOut:
    return schemas.OrderOut(
        id=order.pk,
        term=order.term.slug,
        side=order.side,
        shares=order.shares,
        filled=order.filled,
        limit_price=order.limit_price,
        state=state_words(order),
        reason=order.reason,
        created_at=order.created_at,
        expires_at=order.expires_at,
        key=order.key,
        repeated=_repeated(order),
    )


def _answer(model, *, created: bool) -> HttpResponse:
    answer = conditional.private(model)
    answer.status_code = 201 if created else 200
    return answer


@router.post(
    "/terms/{slug}/quote",
    tags=TAGS,
    response=schemas.QuoteOut,
    auth=auth.TRADE,
    summary="Quote a trade",
)
def quote(request: HttpRequest, slug: str, body: schemas.QuoteIn) -> HttpResponse:
    """What the trade would cost or return now, checked against your cash and shares."""
    token = auth.token_of(request)
    found = trading.quote(term=_term(slug), side=body.side, shares=body.shares, user=token.user)
    return conditional.private(
        schemas.QuoteOut(
            side=found.side,
            shares=found.shares,
            amount=found.amount,
            fee=found.fee,
            total=found.total,
            average_price=found.average_price,
            price_before=found.price_before,
            price_after=found.price_after,
            problem=found.problem,
        )
    )


@router.post(
    "/terms/{slug}/trades",
    tags=TAGS,
    response={200: schemas.TradeOut, 201: schemas.TradeOut},
    auth=auth.TRADE,
    summary="Buy or sell",
)
def trade(
    request: HttpRequest,
    slug: str,
    body: schemas.TradeIn,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key", description=KEY_HELP),
) -> HttpResponse:
    """201 with the new trade; 200 with the first one when the key had traded already."""
    user, term, key = _keyed(request, slug, idempotency_key)
    try:
        done = trading.trade(
            user=user, term=term, side=body.side, shares=body.shares, limit=body.limit, key=key
        )
    except trading.TradeError as exc:
        metrics.TRADE_REFUSALS.labels(type(exc).__name__).inc()
        raise
    repeated = _repeated(done)
    if not repeated:
        metrics.TRADES.labels(body.side).inc()
    return _answer(_trade_out(done, term.slug), created=not repeated)


@router.get(
    "/orders", tags=TAGS, response=schemas.Orders, auth=auth.READ_PRIVATE, summary="Your orders"
)
def my_orders(request: HttpRequest) -> HttpResponse:
    """Waiting orders first, then the most recent (at most 50)."""
    user = auth.token_of(request).user
    return conditional.private(
        schemas.Orders(items=[_order_out(order) for order in orders.orders_of(user=user)])
    )


@router.post(
    "/terms/{slug}/orders",
    tags=TAGS,
    response={200: schemas.OrderOut, 201: schemas.OrderOut},
    auth=auth.TRADE,
    summary="Place a limit order",
)
def place_order(
    request: HttpRequest,
    slug: str,
    body: schemas.OrderIn,
    idempotency_key: str | None = Header(None, alias="Idempotency-Key", description=KEY_HELP),
) -> HttpResponse:
    user, term, key = _keyed(request, slug, idempotency_key)
    expires_at = None
    if body.expires_in_seconds is not None:
        if not 60 <= body.expires_in_seconds <= 90 * 24 * 3600:
            raise Problem(400, "expires_in_seconds must be from 60 to 7,776,000 (90 days).")
        expires_at = timezone.now() + dt.timedelta(seconds=body.expires_in_seconds)
    order = trading.place_order(
        user=user,
        term=term,
        side=body.side,
        shares=body.shares,
        limit_price=body.limit_price,
        expires_at=expires_at,
        key=key,
    )
    order.term = term
    repeated = _repeated(order)
    if not repeated:
        # A program reads what filled in this answer: the notices need not tell it again.
        notices.mark_order_told(order=order)
    return _answer(_order_out(order), created=not repeated)


def _own_order(user, order_id: int) -> Order:
    order = (
        Order.objects.select_related("term").filter(pk=order_id, account__user=user).first()
        if 0 < order_id < 2**63
        else None
    )
    if order is None:
        # Another reader's order is "no such order", as if it did not exist.
        raise Http404("You have no such order.")
    return order


@router.get(
    "/orders/{order_id}",
    tags=TAGS,
    response=schemas.OrderOut,
    auth=auth.READ_PRIVATE,
    summary="An order",
)
def order(request: HttpRequest, order_id: int) -> HttpResponse:
    return conditional.private(_order_out(_own_order(auth.token_of(request).user, order_id)))


@router.delete(
    "/orders/{order_id}",
    tags=TAGS,
    response=schemas.OrderOut,
    auth=auth.TRADE,
    summary="Cancel an order",
)
def cancel_order(request: HttpRequest, order_id: int) -> HttpResponse:
    user = auth.token_of(request).user
    done = trading.cancel_order(user=user, order=_own_order(user, order_id))
    return conditional.private(_order_out(done))


@router.put(
    "/terms/{slug}/follow",
    tags=TAGS,
    response=schemas.FollowOut,
    auth=auth.TRADE,
    summary="Follow a term",
)
def follow(request: HttpRequest, slug: str, body: schemas.FollowIn) -> HttpResponse:
    user = auth.token_of(request).user
    term = _term(slug)
    try:
        found = notices.follow(user=user, term=term, threshold_bp=body.threshold_bp)
    except ValueError as exc:
        raise Problem(400, str(exc)) from None
    return conditional.private(
        schemas.FollowOut(term=term.slug, following=True, threshold_bp=found.threshold_bp)
    )


@router.delete(
    "/terms/{slug}/follow",
    tags=TAGS,
    response=schemas.FollowOut,
    auth=auth.TRADE,
    summary="Unfollow",
)
def unfollow(request: HttpRequest, slug: str) -> HttpResponse:
    user = auth.token_of(request).user
    term = _term(slug)
    notices.unfollow(user=user, term=term)
    return conditional.private(
        schemas.FollowOut(term=term.slug, following=False, threshold_bp=None)
    )


@router.get("/me", tags=TAGS, response=schemas.Me, auth=auth.READ_PRIVATE, summary="Your account")
def me(request: HttpRequest) -> HttpResponse:
    token = auth.token_of(request)
    user = token.user
    held = (
        Holding.objects.filter(account__user=user, shares__gt=0)
        .select_related("term")
        .order_by("term__phrase")
    )
    return conditional.private(
        schemas.Me(
            username=user.get_username(),
            cash=balance(user),
            holdings=[schemas.HoldingOut(term=h.term.slug, shares=h.shares) for h in held],
            scopes=list(token.scopes),
        )
    )
