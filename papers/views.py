from __future__ import annotations

import datetime as dt
import re

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from peerrevenue import fragments
from peerrevenue.pagecache import cache_page_for_anonymous
from peerrevenue.pagination import paginate
from peerrevenue.ratelimit import refuse_if_too_many

from . import days, streams
from .models import Category, Listing, Paper, Watch

PAPERS_PER_PAGE = 30
DEFAULT_CATEGORY = "cs.DC"
MAX_AUTHOR_NAME = 300  # arXiv's longest bylines have names well under 100 characters
DATE_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}")


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
    page = paginate(request, streams.front_page(user=request.user), per_page=PAPERS_PER_PAGE)
    listings = list(page.object_list)
    new_after = None
    if page.number == 1:
        new_after = streams.record_visit(
            user=request.user, newest=listings[0].date if listings else None
        )
    page_days = days.group_days(listings=listings)
    context = {
        "page": page,
        "days": page_days,
        "divider_before": days.divider_before(days=page_days, new_after=new_after),
        "watched": Category.objects.filter(watch__user=request.user),
        "nav": nav,
    }
    return render(request, "papers/home.html", context)


# Where the reader's own part (the watch form) goes in the kept category page; no text can
# make it, since names are escaped and abstracts are sanitised without comments.
WATCH_FORM_SLOT = "<!--the reader's watch form-->"


@cache_page_for_anonymous
def category_listing(request: HttpRequest, code: str, date: str | None = None) -> HttpResponse:
    until = parse_listing_date(date) if date else None
    # All but the watch form is the same for every reader: rendered once per pages generation.
    # The date is in the key because "yet" and the headings' years depend on today.
    days_html, shown = fragments.shared_piece(
        "category-page",
        [request.get_full_path(), timezone.localdate()],
        lambda: _category_page(request, code=code, until=until),
    )
    category = shown["category"]
    context = {
        **shown,
        "until": until,
        "days_html": days_html,
        "is_watching": request.user.is_authenticated
        and fragments.kept_for_generation(
            ("watching", request.user.pk, category.pk),
            lambda: Watch.exists_for(user_id=request.user.pk, category_id=category.pk),
        ),
    }
    return fragments.render_page(request, "papers/category.html", context)


def _category_page(request: HttpRequest, *, code: str, until: dt.date | None) -> fragments.Piece:
    category = get_object_or_404(Category, code=code)
    page = paginate(
        request, Listing.objects.stream(category=category, until=until), per_page=PAPERS_PER_PAGE
    )
    page_days = days.days_on_page(category=category, page=page, until=until)
    # Past the first page, newer and older are the days around the page's first day.
    opens_on = page_days[0].date if page.number > 1 and page_days else until
    context = {
        "category": category,
        "until": until,
        "page": page,
        "days": page_days,
        "day_nav": days.navigation(category=category, until=opens_on),
        "today": timezone.localdate(),
    }
    page_html = render_to_string("papers/_category_page.html", context, request=request)
    head_html, _, days_html = page_html.partition(WATCH_FORM_SLOT)
    watchers = category.watchers.count()
    return days_html, {
        "category": category,
        "head_html": head_html,
        "watchers": f"{watchers} watcher{pluralize(watchers)}",
        "watch_url": reverse("papers:watch", args=[category.code]),
        "feed_url": reverse("papers:feed", args=[category.code]),
    }


@cache_page_for_anonymous
def author(request: HttpRequest, name: str) -> HttpResponse:
    """Papers by one author, newest first, whatever accents the byline used."""
    if not " ".join(name.split()):
        raise Http404("Give an author’s name, e.g. /author/Ada Lovelace/.")
    if len(name) > MAX_AUTHOR_NAME:
        raise Http404(f"No author here has a name longer than {MAX_AUTHOR_NAME} characters.")
    papers = Paper.objects.visible().by_author(name).newest_first()
    page = paginate(request, papers, per_page=PAPERS_PER_PAGE)
    if not page.object_list:
        raise Http404(f"There are no papers by “{name}” here.")
    context = {"name": page.object_list[0].author_named(name), "page": page}
    return render(request, "papers/author.html", context)


@cache_page_for_anonymous
def paper_detail(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    # The same for every reader: rendered once per pages generation.
    paper_html, shown = fragments.shared_piece(
        "paper", [arxiv_id], lambda: _paper_page(request, arxiv_id=arxiv_id)
    )
    return fragments.render_page(request, "papers/paper.html", {"paper_html": paper_html, **shown})


def _paper_page(request: HttpRequest, *, arxiv_id: str) -> fragments.Piece:
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    listings = paper.listings.select_related("category").order_by("date", "category__code")
    context = {"paper": paper, "listings": listings, "versions": paper.versions.all()}
    paper_html = render_to_string("papers/_paper.html", context, request=request)
    return paper_html, {"title": paper.title_text or paper.title}


def paper_version_redirect(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    """`/abs/2411.01234v2/` goes to the paper; its page shows every version."""
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    return redirect(paper)


@cache_page_for_anonymous
def archive(request: HttpRequest, archive_code: str) -> HttpResponse:
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
    if not request.user.is_authenticated:
        # Back to the category page after logging in: the toggle itself is POST-only.
        return redirect_to_login(category.get_absolute_url())
    refused = refuse_if_too_many(
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
