"""The market's pages: the table of terms, a term's page, quote and trade, portfolio,
leaderboard and rules.

Views parse input, call ``market.stats`` (reads) or ``market.trading`` (the only writer) and
render. Buying without JavaScript is three steps: the term page's form asks for a quote
(GET ``quote/``), the quote page shows the price with a confirm form carrying the quoted total
as a limit and a fresh idempotency key, and the confirm POSTs to ``trade/``, which trades and
redirects back to the term page (post/redirect/get). A repeated confirm carries the same key,
so trading returns the first trade instead of making a second one.
"""

from __future__ import annotations

import datetime as dt
import functools
import string
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from peerrevenue import keep, metrics
from peerrevenue.pagination import page_of, paginate
from peerrevenue.ratelimit import client_address, is_limited
from peerrevenue.redirects import safe_next

from . import (
    board,
    charts,
    curve,
    networth,
    notices,
    orders,
    public_names,
    rulebook,
    series,
    stats,
    trade_box,
    trading,
    trend_charts,
    trends,
)
from .cash import cash_and_holding
from .forms import BUY_MAX, EXPIRY_CHOICES, SIDE_CHOICES, QuoteForm, TradeForm
from .models import DEFAULT_K, DEFAULT_P0, Order, Term, Trade
from .order_book import describe
from .research import for_term as term_research
from .templatetags.market_pages import trend
from .tickers import TICKER_SECONDS, bucket_time, clock_bucket, current_tickers
from .units import MINUS, format_credits, format_shares

TERMS_PER_PAGE = 50
ROWS_PER_PAGE = 50
SEARCH_MAX_LENGTH = 100
TOO_FAST = (
    "You are trading too fast: at most {limit:,} trades every {minutes} minutes. "
    "Nothing was traded; wait a little and try again."
)
QUOTING_TOO_FAST = (
    "You are asking for quotes too fast: at most {limit:,} live quotes every {minutes} "
    "minutes. Wait a little, or press “Get a quote”."
)
RULES_FILE = Path(__file__).with_name("rules.md")


def get_term_or_404(slug: str) -> Term:
    """The term at ``slug``, or a 404 saying there is none (the term pages share it)."""
    term = Term.objects.filter(slug=slug).first()
    if term is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    return term


def _get_term_rows(slug: str) -> stats.TermRows:
    rows = stats.term_page_rows(slug=slug)
    if rows is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    return rows


def trade_message(trade: Trade) -> str:
    """``Bought 5 shares of KV cache for 5.15 credits (fee 0.05)``: the total is what left
    (buy) or reached (sell) the trader's cash, fee included."""
    verb = "Bought" if trade.side == Trade.Side.BUY else "Sold"
    return (
        f"{verb} {format_shares(trade.shares)} of {trade.term.phrase} for "
        f"{format_credits(trade.total)} (fee {format_credits(trade.fee, unit=False)})"
    )


# The market table ---------------------------------------------------------------------------

# (URL key, heading, numeric): numeric columns sort high-to-low on the first click.
MARKET_COLUMNS = [
    ("phrase", "Term", False),
    ("price", "Price", True),
    ("change", "1 day", True),
    ("change7", "7 days", True),
    ("supply", "Supply", True),
    ("holders", "Holders", True),
    ("mentions", "Mentions", True),
]


@dataclass(frozen=True, slots=True)
class Column:
    key: str
    heading: str
    numeric: bool
    aria_sort: str  # "ascending", "descending" or "" when the table is not sorted by it
    link: str  # the ?sort= value a click asks for


# The views of the market offered above the table, the first being the default.
MARKET_VIEW_LINKS = [
    ("moving", "What’s moving"),
    ("movers", "Biggest movers"),
    ("traded", "Most traded"),
    ("phrase", "A–Z"),
]


def _sort_from(query) -> tuple[str, bool]:
    value = query.get("sort", "moving")
    key = value.removeprefix("-")
    if key in stats.MARKET_VIEWS:
        return key, True
    if key not in stats.MARKET_SORTS:
        return "moving", True
    return key, value.startswith("-")


def _columns(sort: str, descending: bool) -> list[Column]:
    columns = []
    for key, heading, numeric in MARKET_COLUMNS:
        active = key == sort
        # A click on the sorted column flips it; on another column, starts with the natural order.
        want_descending = (not descending) if active else numeric
        columns.append(
            Column(
                key=key,
                heading=heading,
                numeric=numeric,
                aria_sort=("descending" if descending else "ascending") if active else "",
                link=("-" if want_descending else "") + key,
            )
        )
    return columns


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    facts = keep.read(request, "mentions", "papers", "market_stamps")
    return keep.anonymous_page(request, facts, lambda: _index_response(request, facts))


def _index_response(request: HttpRequest, facts: keep.Facts) -> HttpResponse:
    # Every term's figures are kept by its own stamp (market.board): the table is searched,
    # ordered and paged from them, and kept under exactly what this page of it shows (the
    # URL, the terms on it in their order with their stamps, how many there are, and the facts
    # and clock bucket their figures depend on). A trade of a term that this page does not
    # show, and that moves none onto it, leaves the kept table as it was.
    query = request.GET.copy()
    search = query.get("q", "").strip()[:SEARCH_MAX_LENGTH]
    sort, descending = _sort_from(query)
    # The table's figures move with the clock (a day's change, a week's trades): drawn at the
    # clock bucket's time, which their keys carry.
    bucket = clock_bucket()
    now = bucket_time(bucket)
    shown = board.table(facts, search=search, sort=sort, descending=descending, now=now)
    page = page_of(shown, query.get("page"), per_page=TERMS_PER_PAGE)
    on_page = [(f.pk, f.stamp) for f in page.object_list]
    piece = keep.get_or_make(
        keep.key(
            "market-table",
            request.get_full_path(),
            on_page,
            page.paginator.count,
            facts["mentions"],
            facts["papers"],
            bucket,
        ),
        lambda: _index_table(
            query, page=page, search=search, sort=sort, descending=descending, facts=facts, now=now
        ),
        size=keep.piece_size,
        # Joined from kept rows in a kept frame: cheaper to make than to fetch.
        shared=False,
    )
    context = {"table_html": piece.html, "nav": "market"}
    return keep.respond(request, "market/index.html", context, pieces=["table_html"])


def _index_table(
    query, *, page, search: str, sort: str, descending: bool, facts: keep.Facts, now
) -> keep.Piece:
    # The frame (search, headings, pages) is kept by what it shows, which no trade changes;
    # the rows are kept each by its term's figures (market.board.rows).
    frame = keep.get_or_make(
        keep.key("market-frame", query.urlencode(), page.number, page.paginator.count),
        lambda: keep.render_frame(
            "market/_index_table.html",
            {
                "page": page,
                "search": search,
                "sort_param": query.get("sort", ""),
                "page_query": query,  # for the sort and page links: there is no request here
                "columns": _columns(sort, descending),
                "views": [(key, label, key == sort) for key, label in MARKET_VIEW_LINKS],
            },
            facts=facts,
            places=["rows"],
        ),
        size=len,
    )
    rows = board.rows(list(page.object_list), facts=facts, now=now) if frame.places else []
    return keep.Piece(frame.join(rows="".join(rows)))


# A term's page, quotes and trades ------------------------------------------------------------


def _trader_context(
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


@require_GET
def term_detail(request: HttpRequest, slug: str) -> HttpResponse:
    wanted: list[tuple[object, ...] | str] = [
        ("term", slug),
        "mentions",
        "papers",
        "research",
        public_names.FACT,  # who of the holders and traders may be named
    ]
    if request.user.is_authenticated:
        wanted.append(trade_box.wanted(slug=slug, user=request.user))
    facts = keep.read(request, *wanted)
    if facts["term", slug] is None:
        raise Http404(f"There is no term “{slug}” on the market.")
    return keep.anonymous_page(request, facts, lambda: _term_response(request, facts, slug))


def _term_response(request: HttpRequest, facts: keep.Facts, slug: str) -> HttpResponse:
    # Everything but the trade box is the same for every reader, in two pieces keyed by what
    # each shows. The papers that mention the term move with the mentions and dividends
    # recorded, the papers, the term set and the research counts, never with a trade. The
    # rest (price, chart, holders, trades) moves with the term's own stamp (every trade of
    # it) and the clock (the chart ends now), and shows the papers piece's counts and
    # dividend days. A trade of another term changes nothing here but hover prices.
    rows = functools.cache(lambda: _get_term_rows(slug))  # read once, if either piece is made
    bucket = clock_bucket()  # the chart ends at its time (tickers.bucket_time), not the clock's
    papers = keep.get_or_make(
        keep.key(
            "market-term-papers",
            slug,
            facts["terms"],
            facts["mentions"],
            facts["papers"],
            facts["research"],
        ),
        lambda: _term_papers_piece(rows().term, facts=facts),
        size=keep.piece_size,
    )
    piece = keep.get_or_make(
        keep.key(
            "market-term",
            slug,
            facts["term", slug],
            facts["terms"],
            facts["mentions"],
            facts["papers"],
            facts[public_names.FACT],
            bucket,
        ),
        lambda: _term_piece(rows(), papers=papers, facts=facts, now=bucket_time(bucket)),
        size=keep.piece_size,
        seconds=2 * TICKER_SECONDS,
    )
    values = piece.values
    term_id = int(values["term_id"] or 0)
    trader = _trader_context(
        request, term_id=term_id, slug=slug, price=int(values["price"] or 0), facts=facts
    )
    context = {
        "term": values,
        "head_html": piece.html,
        "main_html": values["main_html"],
        "mentions_html": papers.html,
        "holders_html": values["holders_html"],
        "quote_form_html": _empty_quote_form(
            slug,
            signed_in=request.user.is_authenticated,
            held=trader.get("held", 0),
            facts=facts,
        ),
        "nav": "market",
        **trader,
    }
    return keep.respond(
        request,
        "market/term.html",
        context,
        pieces=["head_html", "main_html", "mentions_html", "holders_html"],
    )


def _empty_quote_form(slug: str, *, signed_in: bool, held: int, facts: keep.Facts) -> str:
    """The term page's order form: its widgets cost more to render than the rest of the page
    around the kept pieces, and it varies only with the term and whether the reader is signed
    in; how many shares they hold (the "Sell all" button) goes in its place per request, so a
    trader's own trade does not render the form again."""

    def render_form() -> keep.Frame:
        context = {
            "term": {"slug": slug},
            "form": QuoteForm(),
            "max_shares": settings.MARKET_MAX_SHARES_PER_TRADE,
            "user": {"is_authenticated": signed_in},
        }
        return keep.render_frame(
            "market/_quote_form.html", context, facts=facts, places=["sell_all"]
        )

    frame = keep.get_or_make(keep.key("quote-form", slug, signed_in), render_form, size=len)
    return mark_safe(frame.join(sell_all=_sell_all(held)))  # noqa: S308 - our own HTML


def _sell_all(held: int) -> str:
    """The quote form's "Sell all" button, for a reader who holds ``held`` shares."""
    if not held:
        return ""
    return format_html(
        '<button type="submit" name="preset" value="all" class="button button--quiet">'
        "Sell all {}</button>",
        f"{held:,}",
    )


def _term_papers_piece(term: Term, *, facts: keep.Facts) -> keep.Piece:
    """The papers that mention the term, its weekly trend, and (as values for the other
    piece) its mention counts and dividend days."""
    dividends = stats.dividend_days(term=term)
    since_listing, before_listing = stats.mention_counts(term=term)
    weeks = trends.weekly_mentions(term=term, facts=facts)
    listed_week = trends.listing_week(term)
    context = {
        "term": term,
        "trend_weeks": weeks,
        "trend_listed_week": listed_week,
        # The legend speaks of pale bars only when some are drawn (mentions before listing).
        "trend_before_listing": any(w.papers for w in weeks if w.week < listed_week),
        "trend_chart": trend_charts.mention_trend_chart(
            weeks,
            label=f"Papers mentioning “{term.phrase}” each week",
            listed_week=listed_week,
        )
        if weeks
        else None,
        "mentions": stats.recent_mentions(term=term),
        "mention_count": since_listing,
        "earlier_mentions": (
            stats.recent_mentions(term=term, since_listing=False) if before_listing else []
        ),
        "earlier_count": before_listing,
        "dividend_per_mention": settings.MARKET_DIVIDEND_PER_MENTION,
        "research": term_research(term),
    }
    return keep.Piece(
        keep.render_piece("market/_term_mentions.html", context, facts=facts),
        {"mention_count": since_listing, "dividends": dividends},  # type: ignore[dict-item]
    )


def _term_piece(
    rows: stats.TermRows, *, papers: keep.Piece, facts: keep.Facts, now: dt.datetime
) -> keep.Piece:
    """The term's head, price chart, holders and trades: what a trade of it changes, drawn
    at ``now`` (its clock bucket's time)."""
    term, holders, trades = rows.term, rows.holders, rows.trades
    latest = (trades[0].created_at, trades[0].price_after) if trades else None
    history = series.price_history(term=term, now=now, latest={term.pk: latest})
    dividends: list[stats.DividendDay] = papers.values["dividends"]  # type: ignore[assignment]
    context = {
        "term": term,
        "chart": charts.price_chart(
            history, label=f"Price of one share of “{term.phrase}” over time", dividends=dividends
        ),
        "price_changes": charts.price_changes(history),
        "dividends": [day for day in dividends if day.amount > 0],
        "mention_count": papers.values["mention_count"],
        "holders": holders,
        "trades": trades,
    }
    parts = {
        part: keep.render_piece(f"market/_term_{part}.html", context, facts=facts)
        for part in ("head", "main", "holders")
    }
    return keep.Piece(
        parts["head"],
        {
            "term_id": term.pk,
            "slug": term.slug,
            "phrase": term.phrase,
            "is_tradable": term.is_tradable,
            "status": term.get_status_display(),
            "price": term.price,
            "main_html": parts["main"],
            "holders_html": parts["holders"],
        },
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
    trader = _trader_context(request, term_id=term.pk, slug=term.slug, price=term.price)
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
        "places": {"sell_all": _sell_all(trader.get("held", 0))},
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


@require_GET
def why_counted(request: HttpRequest, slug: str, arxiv_id: str) -> HttpResponse:
    from .why import explain

    term = get_term_or_404(slug)
    found = explain(term=term, arxiv_id=arxiv_id)
    if found is None:
        raise Http404(f"“{term.phrase}” has no mention in paper {arxiv_id}.")
    return render(request, "market/why.html", {"term": term, "why": found, "nav": "market"})


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
        if data["side"] == Trade.Side.BUY:
            done = trading.buy(
                user=request.user,
                term=term,
                shares=data["shares"],
                max_cost=data["limit"],
                key=data["key"],
            )
        else:
            done = trading.sell(
                user=request.user,
                term=term,
                shares=data["shares"],
                min_proceeds=data["limit"],
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


# Portfolio and leaderboard -----------------------------------------------------------------


@login_required
@require_GET
def portfolio(request: HttpRequest) -> HttpResponse:
    # Only this trader sees it, and it moves with every price: rendered for each request.
    context = {"body_html": _portfolio_body(request), "nav": "portfolio"}
    return render(request, "market/portfolio.html", context)


def _portfolio_body(request: HttpRequest) -> str:
    # balance() opens the account (with its grant) of a user from before the market existed.
    summary = stats.portfolio(user=request.user, cash=trading.balance(request.user))
    history = paginate(request, stats.account_history(user=request.user), per_page=ROWS_PER_PAGE)
    worth = networth.net_worth_series(
        user=request.user, today=networth.today_utc(), now=summary.net_worth
    )
    context = {
        "portfolio": summary,
        "worth": worth,
        "worth_chart": trend_charts.net_worth_chart(worth, label="Your net worth by day")
        if len(worth) >= 2
        else None,
        "page": history,
        "standing": stats.standing(user=request.user),
        "starting_grant": settings.MARKET_STARTING_GRANT,
        "orders": [order_line(o) for o in orders.orders_of(user=request.user, limit=30)],
        # Shown here whatever the flag said (a notice the database wrote itself included).
        "new_notice_ids": {n.pk for n in notices.mark_seen(user=request.user)},
        "notices": notices.recent(user=request.user, limit=10),
    }
    return render_to_string("market/_portfolio_body.html", context, request=request)


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    period = networth.period_from(request.GET.get("period"))
    today = networth.today_utc()
    ranked = networth.period_leaderboard(period=period, today=today)
    # A trader who keeps their page private is "a trader" here, but to themselves.
    ranked = ranked.annotate(private=public_names.is_private('"market_account"."user_id"'))
    page = paginate(request, ranked, per_page=ROWS_PER_PAGE)
    page.object_list = list(page.object_list)
    for account in page.object_list:
        account.public_name = (
            None
            if account.private and account.user_id != request.user.pk
            else account.user.get_username()
        )
    standing = None
    if request.user.is_authenticated:
        standing = networth.period_standing(user=request.user, period=period, today=today)
    context = {
        "page": page,
        "standing": standing,
        "period": period,
        "periods": networth.PERIODS,
        "period_label": networth.PERIODS[period],
        "period_start": networth.period_start(period, today=today),
        "hidden_name": public_names.HIDDEN_NAME,
        "nav": "leaderboard",
    }
    return render(request, "market/leaderboard.html", context)


# Rules ----------------------------------------------------------------------------------------


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
