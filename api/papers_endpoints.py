"""Reading papers without a token: categories, a category's days and listings, a paper,
search in the site's syntax, an author's papers. Thin: each reads through the papers app's
own QuerySets and functions, keyed for ETags by the stamps its pages use (``conditional``)."""

from __future__ import annotations

import datetime as dt

from django.http import Http404, HttpRequest, HttpResponse
from ninja import Router

from market import highlighting
from market.models import Term
from papers import search
from papers.models import Category, CategoryDay, Listing, Paper
from papers.typesetting import tex_to_text
from papers.views import subjects_of
from peerrevenue import keep

from . import conditional, cursors, schemas
from .problems import Problem

router = Router(tags=["papers"])

STREAM = (Listing.AnnounceType.NEW, Listing.AnnounceType.CROSS)
MAX_AUTHOR_NAME = 200


def summary(paper: Paper) -> schemas.PaperSummary:
    return schemas.PaperSummary(
        arxiv_id=paper.arxiv_id,
        version=paper.version,
        title=paper.title_text,
        authors=paper.author_names,
        more_authors=paper.more_authors,
        primary_category=paper.primary_category,
        categories=list(paper.categories),
        submitted_at=paper.submitted_at,
        url=paper.get_absolute_url(),
    )


def _category(category: Category) -> schemas.Category:
    return schemas.Category(
        code=category.code,
        name=category.name,
        archive_code=category.archive_code,
        archive_name=category.archive_name,
        ingested=category.is_ingested,
    )


@router.get("/categories", response=schemas.Categories, summary="Every category")
def categories(request: HttpRequest) -> HttpResponse:
    facts = keep.read(request, "papers", "categories")

    def make() -> schemas.Categories:
        found = Category.objects.with_counts().order_by("code")
        return schemas.Categories(items=[_category(category) for category in found])

    # The counts behind "ingested" move with any listing: the papers stamp.
    return conditional.respond(
        request, name="categories", parts=(facts["papers"], facts["categories"]), make=make
    )


def _category_stamp(request: HttpRequest, code: str) -> int:
    facts = keep.read(request, ("category", code))
    stamp = facts["category", code]
    if stamp is None:
        raise Http404(f"There is no category “{code}”.")
    return stamp


@router.get("/categories/{code}/days", response=schemas.Days, summary="A category's days")
def days(
    request: HttpRequest, code: str, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    stamp = _category_stamp(request, code)
    before = cursors.decode(cursor, kinds=(str,))
    count = cursors.limit_of(limit)

    def make() -> schemas.Days:
        rows = CategoryDay.objects.filter(category__code=code).order_by("-date")
        if before is not None:
            rows = rows.filter(date__lt=_date(before[0]))
        shown, after_them = cursors.page(rows, count, lambda last: [last.date.isoformat()])
        items = [
            schemas.DayCount(date=row.date, papers=row.papers, replacements=row.replacements)
            for row in shown
        ]
        return schemas.Days(category=code, items=items, next_cursor=after_them)

    return conditional.respond(request, name="days", parts=(stamp,), make=make)


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise Problem(400, cursors.BAD_CURSOR) from None


@router.get(
    "/categories/{code}/days/{date}",
    response=schemas.Listing,
    summary="A category's listing for a day",
)
def listing(request: HttpRequest, code: str, date: dt.date) -> HttpResponse:
    stamp = _category_stamp(request, code)

    def make() -> schemas.Listing:
        rows = (
            Listing.objects.filter(category__code=code, date=date)
            .visible()
            .select_related("paper")
            .defer("paper__search_vector")
            .order_by("paper__arxiv_id")
        )
        parts: dict[str, list[schemas.ListedPaper]] = {"new": [], "cross": [], "replace": []}
        for row in rows:
            part = row.announce_type if row.announce_type in STREAM else "replace"
            parts[part].append(
                schemas.ListedPaper(
                    announce_type=row.announce_type, version=row.version, paper=summary(row.paper)
                )
            )
        if not any(parts.values()):
            raise Http404(f"{code} has no listing on {date:%Y-%m-%d}.")
        return schemas.Listing(
            category=code,
            date=date,
            new=parts["new"],
            cross_lists=parts["cross"],
            replacements=parts["replace"],
        )

    return conditional.respond(request, name="listing", parts=(stamp,), make=make)


@router.get("/papers/{arxiv_id}", response=schemas.Paper, summary="A paper")
def paper(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    facts = keep.read(request, ("paper", arxiv_id), "categories")
    if facts["paper", arxiv_id] is None:
        raise Http404(f"There is no paper {arxiv_id} here.")

    def make() -> schemas.Paper:
        found = Paper.objects.visible().filter(arxiv_id=arxiv_id).first()
        if found is None:
            raise Http404(f"There is no paper {arxiv_id} here.")
        listings = found.listings.select_related("category").order_by("date", "category__code")
        text = f"{found.title_text}\n{found.abstract_text}"
        mentioned = highlighting.current_matcher(str(facts["terms"])).mentioned_terms(text)
        terms = Term.objects.filter(pk__in=mentioned).order_by("phrase")
        return schemas.Paper(
            arxiv_id=found.arxiv_id,
            version=found.version,
            title=found.title_text,
            title_tex=found.title,
            abstract=found.abstract_text,
            abstract_tex=found.abstract,
            authors=[
                schemas.Author(
                    name=author.get("name_text") or author.get("name", ""),
                    affiliation=tex_to_text(author.get("affiliation") or ""),
                )
                for author in found.authors
            ],
            more_authors=found.more_authors,
            subjects=[
                schemas.Subject(code=s.code, name=s.name, primary=s.primary)
                for s in subjects_of(found)
            ],
            versions=[
                schemas.Version(
                    number=v.number, submitted_at=v.submitted_at, current=v.current, title=v.title
                )
                for v in found.version_history(found.versions.all())
            ],
            listings=[
                schemas.PaperListing(
                    category=row.category.code, date=row.date, announce_type=row.announce_type
                )
                for row in listings
            ],
            terms=[schemas.TermRef(slug=term.slug, phrase=term.phrase) for term in terms],
            comment=found.comment,
            journal_ref=found.journal_ref,
            doi=found.doi,
            license=found.license,
            url=found.get_absolute_url(),
        )

    parts = (facts["paper", arxiv_id], facts["categories"], facts["terms"])
    return conditional.respond(request, name="paper", parts=parts, make=make)


@router.get("/search", response=schemas.SearchResults, summary="Search, in the site's syntax")
def search_papers(
    request: HttpRequest,
    q: str,
    category: str | None = None,
    since: dt.date | None = None,
    until: dt.date | None = None,
    cursor: str | None = None,
) -> HttpResponse:
    """``q`` as the search box takes it: free words, ``au:``, ``ti:``, ``abs:``, ``cat:``,
    quoted phrases. Ranked best first; a page is the site's page of results."""
    facts = keep.read(request, "papers")
    query = search.parse(
        q, categories=[category] if category else [], date_from=since, date_to=until
    )
    page = (cursors.decode(cursor, kinds=(int,)) or [1])[0]
    if not 1 <= page <= 1000:
        raise Problem(400, cursors.BAD_CURSOR)

    def make() -> schemas.SearchResults:
        with search.refusals_as_messages():
            found = search.results(query, page=page)
        more = found.page.has_next()
        return schemas.SearchResults(
            items=[summary(paper) for paper in found.page.object_list],
            found=found.found,
            similar=found.similar,
            next_cursor=cursors.encode([page + 1]) if more else None,
        )

    return conditional.respond(request, name="search", parts=(facts["papers"],), make=make)


@router.get("/authors/{name}/papers", response=schemas.Papers, summary="An author's papers")
def author_papers(
    request: HttpRequest, name: str, cursor: str | None = None, limit: int | None = None
) -> HttpResponse:
    """Newest first, whatever accents the byline used."""
    name = " ".join(name.split())
    if not name or len(name) > MAX_AUTHOR_NAME:
        raise Http404("Give an author's name of at most 200 characters.")
    facts = keep.read(request, "papers")
    start = (cursors.decode(cursor, kinds=(int,)) or [0])[0]
    if start < 0:
        raise Problem(400, cursors.BAD_CURSOR)
    count = cursors.limit_of(limit)

    def make() -> schemas.Papers:
        ids = (
            Paper.objects.by_author(name)
            .visible()
            .newest_first()
            .values_list("pk", flat=True)[start : start + count + 1]
        )
        wanted = list(ids)
        loaded = Paper.objects.defer("search_vector").in_bulk(wanted[:count])
        items = [summary(loaded[pk]) for pk in wanted[:count] if pk in loaded]
        more = len(wanted) > count
        return schemas.Papers(
            items=items, next_cursor=cursors.encode([start + count]) if more else None
        )

    return conditional.respond(request, name="author", parts=(facts["papers"],), make=make)
