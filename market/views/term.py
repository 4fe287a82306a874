"""A term's page: two kept pieces (its papers; its price, chart, holders and trades) around
the reader's trade box, and why a paper's mention counted."""

from __future__ import annotations

import datetime as dt
import functools

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET

from peerrevenue import keep

from .. import charts, open_positions, public_names, series, stats, trade_box, trend_charts, trends
from ..forms import QuoteForm
from ..models import Term
from ..research import for_term as term_research
from ..tickers import TICKER_SECONDS, bucket_time, clock_bucket
from .trader import sell_all, trader_context

# The page's two pieces, each the same for every reader. Its papers move with the mentions and
# dividends recorded, the papers, the term set and the research counts, never with a trade.
TERM_PAPERS: keep.Cached[keep.Piece] = keep.Cached(
    "market-term-papers",
    stamps=("terms", "mentions", "papers", "research"),
    size=keep.piece_size,
)
# The rest (price, chart, holders, trades) moves with the term's own stamp (every trade of
# it), shows the papers piece's counts and dividend days and who may be named, and is keyed by
# the clock's bucket on purpose (the chart ends at its time).
TERM_MARKET: keep.Cached[keep.Piece] = keep.Cached(
    "market-term",
    stamps=("term", "terms", "mentions", "papers", public_names.FACT),
    size=keep.piece_size,
    seconds=2 * TICKER_SECONDS,
)
# The order form varies with the term and whether the reader is signed in, nothing stored.
QUOTE_FORM: keep.Cached[keep.Frame] = keep.Cached("quote-form", stamps=(), size=len)


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


@require_GET
def term_detail(request: HttpRequest, slug: str) -> HttpResponse:
    wanted: list[tuple[object, ...] | str] = [
        ("term", slug),
        "mentions",
        "papers",
        "research",
        public_names.FACT,  # who of the holders and traders may be named
        open_positions.FACT,  # who of them are verified authors
        trade_box.wanted(slug=slug),  # the reader's (read with their session: keep.READER)
    ]
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
    papers = TERM_PAPERS.get(facts, slug, make=lambda: _term_papers_piece(rows().term, facts=facts))
    piece = TERM_MARKET.get(
        facts,
        slug,
        bucket,
        make=lambda: _term_piece(rows(), papers=papers, facts=facts, now=bucket_time(bucket)),
    )
    values = piece.values
    term_id = int(values["term_id"] or 0)
    trader = trader_context(
        request, term_id=term_id, slug=slug, price=int(values["price"] or 0), facts=facts
    )
    context = {
        "term": values,
        "head_html": piece.html,
        "main_html": values["main_html"],
        "mentions_html": papers.html,
        "holders_html": values["holders_html"],
        "positions_html": open_positions.positions_piece(slug=slug, term_id=term_id, facts=facts),
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
        pieces=["head_html", "main_html", "mentions_html", "holders_html", "positions_html"],
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

    frame = QUOTE_FORM.get(facts, slug, signed_in, make=render_form)
    return mark_safe(frame.join(sell_all=sell_all(held)))  # noqa: S308 - our own HTML


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


@require_GET
def why_counted(request: HttpRequest, slug: str, arxiv_id: str) -> HttpResponse:
    from ..why import explain

    term = get_term_or_404(slug)
    found = explain(term=term, arxiv_id=arxiv_id)
    if found is None:
        raise Http404(f"“{term.phrase}” has no mention in paper {arxiv_id}.")
    return render(request, "market/why.html", {"term": term, "why": found, "nav": "market"})
