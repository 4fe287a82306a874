"""Reading the market without a token: terms with their figures, a term's price history,
trades and holders, dividends with their papers, the leaderboard.

A trader who keeps their page private is never named nor identified here: their trades show
``trader: null``, and they are left out of holders (the SQL that says who is private is the
accounts app's, through ``market.public_names``)."""

from __future__ import annotations

import hashlib

from django.db.models import Q
from django.http import Http404, HttpRequest, HttpResponse
from ninja import Router

from market import leaderboards, networth, public_names, stats
from market.models import DividendEvent, Holding, Term, Trade
from market.tickers import bucket_time, clock_bucket
from peerrevenue import keep

from . import conditional, cursors, schemas
from .papers_endpoints import summary
from .problems import Problem

router = Router(tags=["market"])

PRIVATE = '"market_account"."user_id"'


def _term_out(term) -> schemas.Term:
    return schemas.Term(
        slug=term.slug,
        phrase=term.phrase,
        status=term.status,
        price=term.price_now,
        supply=term.supply,
        change_1d_bp=term.change_1d_bp,
        change_7d_bp=term.change_7d_bp,
        mentions=term.recent_mentions,
        holders=term.holder_count,
    )


@router.get("/terms", response=schemas.Terms, summary="Terms on the market")
def terms(
    request: HttpRequest, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    """Listed and halted terms, by phrase. Day and week changes are drawn at a 30-second
    clock bucket's end, as the pages draw them."""
    facts = keep.read(request, "prices", "terms", "mentions", "papers")
    after = cursors.decode(cursor, kinds=(str, int))
    count = cursors.limit_of(limit)
    bucket = clock_bucket()

    def make() -> schemas.Terms:
        found = stats.market_terms(sort="phrase", now=bucket_time(bucket))
        if after is not None:
            found = found.filter(
                Q(phrase_lower__gt=after[0]) | Q(phrase_lower=after[0], pk__gt=after[1])
            )
        shown, after_them = cursors.page(found, count, lambda last: [last.phrase_lower, last.pk])
        return schemas.Terms(items=[_term_out(term) for term in shown], next_cursor=after_them)

    parts = (facts["prices"], facts["terms"], facts["mentions"], facts["papers"], bucket)
    return conditional.respond(request, name="terms", parts=parts, make=make)


@router.get("/terms/{slug}", response=schemas.Term, summary="A term")
def term(request: HttpRequest, slug: str) -> HttpResponse:
    facts = keep.read(request, ("term", slug), "mentions", "papers")
    if facts["term", slug] is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    bucket = clock_bucket()

    def make() -> schemas.Term:
        found = stats.market_terms(now=bucket_time(bucket)).filter(slug=slug).first()
        if found is None:
            raise Http404(f"“{slug}” is delisted: it no longer trades.")
        return _term_out(found)

    parts = (facts["term", slug], facts["mentions"], facts["papers"], bucket)
    return conditional.respond(request, name="term", parts=parts, make=make)


def _term(request: HttpRequest, slug: str, *also: str) -> tuple[Term, keep.Facts]:
    facts = keep.read(request, ("term", slug), *also)
    term = Term.objects.filter(slug=slug).first() if facts["term", slug] is not None else None
    if term is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    return term, facts


@router.get("/terms/{slug}/prices", response=schemas.PriceHistory, summary="A term's prices")
def prices(
    request: HttpRequest, slug: str, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    """The price after each trade, oldest first."""
    term, facts = _term(request, slug)
    after = cursors.decode(cursor, kinds=(int,))
    count = cursors.limit_of(limit)

    def make() -> schemas.PriceHistory:
        rows = Trade.objects.filter(term=term).order_by("term_version")
        if after is not None:
            rows = rows.filter(term_version__gt=after[0])
        shown, after_them = cursors.page(
            rows.values_list("created_at", "price_after", "supply_after", "term_version"),
            count,
            lambda last: [last[3]],
        )
        items = [
            schemas.PricePoint(at=at, price=price, supply=supply) for at, price, supply, _ in shown
        ]
        return schemas.PriceHistory(term=slug, items=items, next_cursor=after_them)

    return conditional.respond(request, name="prices", parts=(facts["term", slug],), make=make)


@router.get("/terms/{slug}/trades", response=schemas.Trades, summary="A term's trades")
def trades(
    request: HttpRequest, slug: str, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    term, facts = _term(request, slug, public_names.FACT)
    before = cursors.decode(cursor, kinds=(int,))
    count = cursors.limit_of(limit)

    def make() -> schemas.Trades:
        rows = (
            Trade.objects.filter(term=term)
            .select_related("account__user")
            .annotate(private=public_names.is_private(PRIVATE))
            .order_by("-term_version")
        )
        if before is not None:
            rows = rows.filter(term_version__lt=before[0])
        shown, after_them = cursors.page(rows, count, lambda last: [last.term_version])
        items = [
            schemas.PublicTrade(
                id=trade.pk,
                at=trade.created_at,
                trader=None
                if trade.private or trade.account.user is None
                else trade.account.user.get_username(),
                side=trade.side,
                shares=trade.shares,
                price_after=trade.price_after,
            )
            for trade in shown
        ]
        return schemas.Trades(term=slug, items=items, next_cursor=after_them)

    parts = (facts["term", slug], facts[public_names.FACT])
    return conditional.respond(request, name="trades", parts=parts, make=make)


@router.get("/terms/{slug}/holders", response=schemas.Holders, summary="A term's holders")
def holders(
    request: HttpRequest, slug: str, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    """Public traders only, most shares first: a private trader is not listed at all."""
    term, facts = _term(request, slug, public_names.FACT)
    after = cursors.decode(cursor, kinds=(int, int))
    count = cursors.limit_of(limit)

    def make() -> schemas.Holders:
        rows = (
            Holding.objects.filter(term=term, shares__gt=0, account__user__isnull=False)
            .select_related("account__user")
            .annotate(private=public_names.is_private(PRIVATE))
            .filter(private=False)
            .order_by("-shares", "account_id")
        )
        if after is not None:
            rows = rows.filter(Q(shares__lt=after[0]) | Q(shares=after[0], account_id__gt=after[1]))
        shown, after_them = cursors.page(rows, count, lambda last: [last.shares, last.account_id])
        items = [
            schemas.Holder(trader=held.account.user.get_username(), shares=held.shares)
            for held in shown
            if held.account.user is not None
        ]
        return schemas.Holders(term=slug, items=items, next_cursor=after_them)

    parts = (facts["term", slug], facts[public_names.FACT])
    return conditional.respond(request, name="holders", parts=parts, make=make)


@router.get("/dividends", response=schemas.Dividends, summary="Dividends and their papers")
def dividends(
    request: HttpRequest, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    facts = keep.read(request, "mentions", "papers")
    before = cursors.decode(cursor, kinds=(int,))
    count = cursors.limit_of(limit)

    def make() -> schemas.Dividends:
        rows = (
            DividendEvent.objects.filter(paper__hidden=False)
            .select_related("term", "paper")
            .defer("paper__search_vector")
            .order_by("-id")
        )
        if before is not None:
            rows = rows.filter(pk__lt=before[0])
        shown, after_them = cursors.page(rows, count, lambda last: [last.pk])
        items = [
            schemas.Dividend(
                id=event.pk,
                term=schemas.TermRef(slug=event.term.slug, phrase=event.term.phrase),
                paper=summary(event.paper),
                date=event.date,
                per_share=event.per_share,
                shares=event.shares,
                amount=event.amount,
            )
            for event in shown
        ]
        return schemas.Dividends(items=items, next_cursor=after_them)

    # A term's phrase changes move the terms stamp; dividends move the mentions stamp.
    parts = (facts["mentions"], facts["papers"], facts["terms"])
    return conditional.respond(request, name="dividends", parts=parts, make=make)


@router.get("/leaderboard", response=schemas.Leaderboard, summary="The leaderboard")
def leaderboard(
    request: HttpRequest, period: str = "all", cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    """``period``: week, month or all. Figures of the moment they are read, so its ETag is
    the answer's own digest (a poller still gets its 304 when nothing moved)."""
    if period not in leaderboards.PERIODS:
        raise Problem(
            400, f"period must be one of {', '.join(leaderboards.PERIODS)} (got {period!r})."
        )
    start = (cursors.decode(cursor, kinds=(int,)) or [0])[0]
    if start < 0:
        raise Problem(400, cursors.BAD_CURSOR)
    count = cursors.limit_of(limit)
    ranked = leaderboards.period_leaderboard(period=period, today=networth.today_utc()).annotate(
        private=public_names.is_private(PRIVATE)
    )
    found = list(ranked[start : start + count + 1])
    answer = schemas.Leaderboard(
        period=period,
        items=[
            schemas.Leader(
                rank=account.rank,
                trader=None
                if account.private or account.user is None
                else account.user.get_username(),
                net_worth=account.net_worth,
                gain=account.gain,
            )
            for account in found[:count]
        ],
        next_cursor=cursors.encode([start + count]) if len(found) > count else None,
    )
    body = answer.model_dump_json()
    digest = hashlib.blake2b(body.encode(), digest_size=12).hexdigest()
    return conditional.respond(request, name="leaderboard", parts=(digest,), make=lambda: answer)
