"""The market table (``/market/``): the terms searched, sorted and paged, kept per page of
the table with each row kept by its term's stamp."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_GET

from peerrevenue import keep
from peerrevenue.pagination import page_of

from .. import board, stats
from ..tickers import bucket_time, clock_bucket

TERMS_PER_PAGE = 50
SEARCH_MAX_LENGTH = 100

# The table as shown: under the URL, the terms on the page in their order with their stamps,
# how many there are, the mentions and papers, and the clock's bucket their day change and
# week's trades are drawn at. Joined from kept rows in a kept frame: cheaper to make than to
# fetch, so kept in this process only.
TABLE: keep.Cached[keep.Piece] = keep.Cached(
    "market-table", stamps=("mentions", "papers"), size=keep.piece_size, shared=False
)
# Its search, headings and pages: under the query, the page's number and the count.
TABLE_FRAME: keep.Cached[keep.Frame] = keep.Cached("market-frame", stamps=(), size=len)


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
    piece = TABLE.get(
        facts,
        request.get_full_path(),
        on_page,
        page.paginator.count,
        bucket,
        make=lambda: _index_table(
            query, page=page, search=search, sort=sort, descending=descending, facts=facts, now=now
        ),
    )
    context = {"table_html": piece.html, "nav": "market"}
    return keep.respond(request, "market/index.html", context, pieces=["table_html"])


def _index_table(
    query, *, page, search: str, sort: str, descending: bool, facts: keep.Facts, now
) -> keep.Piece:
    # The frame (search, headings, pages) is kept by what it shows, which no trade changes;
    # the rows are kept each by its term's figures (market.board.rows).
    frame = TABLE_FRAME.get(
        facts,
        query.urlencode(),
        page.number,
        page.paginator.count,
        make=lambda: keep.render_frame(
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
    )
    rows = board.rows(list(page.object_list), facts=facts, now=now) if frame.places else []
    return keep.Piece(frame.join(rows="".join(rows)))
