from __future__ import annotations

import datetime as dt
import re
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.utils import timezone
from django.utils.text import Truncator
from django.views.decorators.http import require_POST

from peerrevenue import keep
from peerrevenue.pagination import number_of, paginate
from peerrevenue.ratelimit import refuse_if_signed_out_or_too_many

from . import bibtex, code_links, days, entries, search, streams
from .categories import CS_CATEGORIES
from .models import Category, Paper, author_page
from .typesetting import tex_to_text

PAPERS_PER_PAGE = 30
DEFAULT_CATEGORY = "cs.DC"
MAX_AUTHOR_NAME = 300  # arXiv's longest bylines have names well under 100 characters
MAX_PAGE = 1_000_000  # past any author's last page; keeps a hand-typed ?page= a valid OFFSET
DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")

# A category's days of papers, the same for every reader: under its code, the day and page
# asked for and today's date ("yet" and the headings' years depend on it), versioned by the
# category's stamp (its listings and their papers) and the term set. Prices are holes; a watch
# moves no stamp. Not in the shared cache: made from kept entries in two queries, it costs
# less than pickling 180 kB into Redis after each change (and fetching it in every process).
CATEGORY_DAYS: keep.Cached[keep.Piece] = keep.Cached(
    "category-page", stamps=("category", "terms"), size=keep.piece_size, shared=False
)
# A paper's page, the same for every reader: versioned by the paper's stamp (it, its listings,
# its versions), the categories' names it shows and the term set.
PAPER: keep.Cached[keep.Piece] = keep.Cached(
    "paper", stamps=("paper", "categories", "terms"), size=keep.piece_size
)


def parse_listing_date(value: str) -> dt.date:
    """A YYYY-MM-DD path segment as a date; anything else, or an impossible date, is a 404."""
    try:
        if not DATE_PATTERN.fullmatch(value):
            raise ValueError(value)
        return dt.date.fromisoformat(value)
    except ValueError:
        raise Http404(f"“{value}” is not a date of the form YYYY-MM-DD.") from None


def home(request: HttpRequest) -> HttpResponse:
    """A signed-in reader's own front page; everyone else starts at cs.DC."""
    if not request.user.is_authenticated:
        return redirect("papers:category", DEFAULT_CATEGORY)
    return front_page(request, nav="papers")


@login_required
def watching(request: HttpRequest) -> HttpResponse:
    """The same merged stream, at the address the navigation's "Watching" link has."""
    return front_page(request, nav="watching")


def front_page(request: HttpRequest, *, nav: str) -> HttpResponse:
    user = request.user
    assert user.is_authenticated  # each view that shows it has made sure
    try:
        with search.refusals_as_messages():
            page = paginate(request, streams.front_page(user=user), per_page=PAPERS_PER_PAGE)
            listings = list(page.object_list)
    except search.SearchError:
        # A saved search the database will not run must not take the page down with it: the
        # watched categories alone, and /searches/ says which search it is.
        messages.error(
            request,
            "Your saved searches could not be run, so this page shows your categories only; "
            "see Saved searches to change them.",
        )
        watched = [streams.watched_categories]
        page = paginate(
            request, streams.front_page(user=user, sources=watched), per_page=PAPERS_PER_PAGE
        )
        listings = list(page.object_list)
    new_after = None
    if page.number == 1:
        new_after = streams.record_visit(user=user, newest=listings[0].date if listings else None)
    page_days = days.group_days(listings=listings)
    context = {
        "page": page,
        "days": page_days,
        "divider_before": days.divider_before(days=page_days, new_after=new_after),
        "watched": Category.objects.filter(watch__user=user),
        "nav": nav,
    }
    return render(request, "papers/home.html", context)


def category_listing(request: HttpRequest, code: str, date: str | None = None) -> HttpResponse:
    until = parse_listing_date(date) if date else None
    # The reader's own fact by keep.READER: a signed-in reader's session is then read with
    # the facts, in one statement.
    wanted = [("category", code), ("watchers", code), ("watching", code, keep.READER)]
    facts = keep.read(request, *wanted)
    if facts["category", code] is None:
        raise Http404(f"There is no category “{code}”.")
    return keep.whole_page(
        request, facts, lambda: _category_response(request, facts, code=code, until=until)
    )


def _category_response(
    request: HttpRequest, facts: keep.Facts, *, code: str, until: dt.date | None
) -> HttpResponse:
    # All but the watch form is the same for every reader, and keyed by what it shows: the
    # category's stamp (its listings and their papers), the term set, the URL and today's date
    # ("yet" and the headings' years depend on it). Prices are holes; a watch moves no stamp.
    today = timezone.localdate()
    number = request.GET.get("page")
    piece = CATEGORY_DAYS.get(
        facts,
        code,
        until,
        number,
        today,
        make=lambda: _category_piece(code=code, until=until, query=request.GET.copy(), facts=facts),
    )
    watchers = facts["watchers", code]
    context = {
        **piece.values,
        "until": until,
        "days_html": piece.html,
        "watchers": f"{watchers} watcher{pluralize(watchers)}",
        "is_watching": request.user.is_authenticated and facts["watching", code, request.user.pk],
    }
    return keep.respond(
        request,
        "papers/category.html",
        context,
        pieces=["head_html", "days_html"],
        per_reader=True,
    )


def _category_piece(
    *, code: str, until: dt.date | None, query: QueryDict, facts: keep.Facts
) -> keep.Piece:
    # Two queries (the category and its days; the page's entries) and the papers of entries
    # not kept: after one paper's edit, one paper and one entry to render.
    found = days.read_days(
        code=code, until=until, page=number_of(query.get("page")), per_page=PAPERS_PER_PAGE
    )
    category = found.category
    page, page_days = days.page_of_days(
        found=found, given=query.get("page"), per_page=PAPERS_PER_PAGE
    )
    entries.fill(
        [entry for day in page_days for entry in (*day.listings, *day.replacements)],
        category=category,
        facts=facts,
    )
    # Past the first page, newer and older are the days around the page's first day.
    opens_on = page_days[0].date if page.number > 1 and page_days else until
    day_nav = days.navigation(found=found, opens_on=opens_on)
    today = timezone.localdate()
    # Everything but the days (the head, the way between days, the pagination) is kept by what
    # it shows, which an edit of a paper does not move: then the page is the kept frame and
    # the kept entries joined, with no template rendered but the edited paper's entry.
    frame = keep.get_or_make(
        keep.key(
            "category-frame",
            *(category.pk, category.code, category.name, category.ingest_enabled),
            *(category.archive_code, category.archive_name),
            *(until, day_nav, today, bool(page_days)),
            *(page.number, page.paginator.num_pages, query.urlencode()),
        ),
        lambda: keep.render_frame(
            "papers/_category_page.html",
            {
                "category": category,
                "until": until,
                "page": page,
                "days": bool(page_days),
                "day_nav": day_nav,
                "today": today,
                "page_query": query,  # for the pagination's links: there is no request here
            },
            facts=facts,
            places=["watch_form", "days"],
        ),
        size=len,
        shared=False,
    )
    # The reader's watch form is filled per request, between the piece's two parts.
    head_html, days_html = frame.split(
        "watch_form", days=entries.days_html(page_days, category=category)
    )
    return keep.Piece(
        days_html,
        {
            "head_html": head_html,
            "category_code": category.code,
            "category_name": category.name,
        },
    )


def author(request: HttpRequest, name: str) -> HttpResponse:
    """Papers by one author, newest first, whatever accents the byline used."""
    if not " ".join(name.split()):
        raise Http404("Give an author’s name, e.g. /author/Ada Lovelace/.")
    if len(name) > MAX_AUTHOR_NAME:
        raise Http404(f"No author here has a name longer than {MAX_AUTHOR_NAME} characters.")
    # Any paper may be this author's: kept by the stamp of all papers.
    facts = keep.read(request, "papers")
    return keep.anonymous_page(request, facts, lambda: _author_page(request, facts, name))


def _author_page(request: HttpRequest, facts: keep.Facts, name: str) -> HttpResponse:
    number = number_of(request.GET.get("page"))
    start = (min(number, MAX_PAGE) - 1) * PAPERS_PER_PAGE
    rows, count = author_page(name=name, start=start, stop=start + PAPERS_PER_PAGE)
    if not rows:
        if count:
            raise Http404("There is no such page.")
        raise Http404(f"There are no papers by “{name}” here.")
    # Each paper's entry is kept by its stamp and the term set, as on a category page: only
    # the papers whose entries are not kept are loaded and rendered.
    listed = [entries.Entry(None, paper_id, stamp, None) for paper_id, stamp in rows]
    loaded = entries.fill(listed, category=None, facts=facts)
    # The heading spells the name as the newest byline does, kept by that paper's stamp.
    first_id, first_stamp = rows[0]

    def spelled() -> str:
        paper = loaded.get(first_id) or Paper.objects.only("authors").get(pk=first_id)
        return paper.author_named(name)

    heading = keep.get_or_make(keep.key("author-name", name, first_id, first_stamp), spelled)
    # The paginator only needs the count, to number the pages: a range of it costs nothing.
    paginator: Paginator[Any] = Paginator(range(count), PAPERS_PER_PAGE)
    page = Page(listed, number, paginator)
    context = {"name": heading, "page": page}
    return render(request, "papers/author.html", context)


def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    facts = keep.read(request, ("paper", arxiv_id), "categories")
    if facts["paper", arxiv_id] is None:
        raise Http404(f"There is no paper {arxiv_id} here.")
    return keep.whole_page(request, facts, lambda: _paper_response(request, facts, arxiv_id))


def _paper_response(request: HttpRequest, facts: keep.Facts, arxiv_id: str) -> HttpResponse:
    # The same for every reader, keyed by the paper's stamp (it, its listings, its versions)
    # and the categories' names it shows.
    piece = PAPER.get(facts, arxiv_id, make=lambda: _paper_piece(arxiv_id=arxiv_id, facts=facts))
    context = {"paper_html": piece.html, "arxiv_id": arxiv_id, **piece.values}
    # Around the piece the page shows only holes (the reader's save, note and thread are
    # filled per request): a signed-in reader's render of it is kept for them.
    return keep.respond(
        request, "papers/paper.html", context, pieces=["paper_html"], per_reader=True
    )


def _paper_piece(*, arxiv_id: str, facts: keep.Facts) -> keep.Piece:
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    listings = paper.listings.select_related("category").order_by("date", "category__code")
    context = {
        "paper": paper,
        "bibtex": bibtex.entry(paper),
        "code_links": code_links.of_paper(paper),
        "listings": listings,
        "versions": paper.version_history(paper.versions.all()),
        "subjects": subjects_of(paper),
    }
    paper_html = keep.render_piece("papers/_paper.html", context, facts=facts)
    values = {
        "title": paper.title_text or paper.title,
        "paper_id": paper.pk,
        # The page's <meta name="description">: what a search engine shows under the title.
        # Only the abstract's start is turned to text: a hostile one can be 600 kB long.
        "description": Truncator(" ".join(tex_to_text(paper.abstract[:600]).split())).chars(160),
    }
    return keep.Piece(paper_html, values)


def subjects_of(paper: Paper) -> list[SimpleNamespace]:
    """The paper's categories, primary first, each with its name where the site knows it
    (``code``, ``name``, ``primary``), as arXiv's abstract page lists its subjects."""
    codes = [code for code in dict.fromkeys([paper.primary_category, *paper.categories]) if code]
    names = dict(CS_CATEGORIES)
    names.update(Category.objects.filter(code__in=codes).values_list("code", "name"))
    return [
        SimpleNamespace(code=code, name=names.get(code, ""), primary=code == paper.primary_category)
        for code in codes
    ]


def paper_bibtex(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """The paper's BibTeX entry as a ``.bib`` file: the Cite control's download, which works
    without JavaScript."""
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    response = HttpResponse(bibtex.entry(paper), content_type="text/x-bibtex; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{bibtex.file_name(arxiv_id)}"'
    return response


def paper_version_redirect(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """`/abs/2411.01234v2/` goes to the paper; its page shows every version."""
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    return redirect(paper)


def archive(request: HttpRequest, archive_code: str) -> HttpResponse:
    facts = keep.read(request, "papers")
    return keep.anonymous_page(request, facts, lambda: _archive_page(request, archive_code))


def _archive_page(request: HttpRequest, archive_code: str) -> HttpResponse:
    categories = list(Category.objects.filter(archive_code=archive_code).with_counts())
    if not categories:
        raise Http404(f"There is no archive “{archive_code}”.")
    return render(
        request,
        "papers/archive.html",
        {
            "archive_name": categories[0].archive_name,
            "archive_code": archive_code,
            "ingested": [category for category in categories if category.is_ingested],
            "not_ingested": [category for category in categories if not category.is_ingested],
        },
    )


@require_POST
def toggle_watch(request: HttpRequest, code: str) -> HttpResponse:
    category = get_object_or_404(Category, code=code)
    # Back to the category page after logging in: the toggle itself is POST-only.
    refused = refuse_if_signed_out_or_too_many(
        request,
        scope="watch",
        limit=settings.RATELIMIT_WATCHES_PER_WINDOW,
        done="watched or unwatched a category",
        back=category.get_absolute_url(),
    )
    if refused:
        return refused
    category.toggle_watch(request.user)
    return redirect(category)
