"""The library's pages: thin, each parses input, calls one domain function and renders."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import redirect_to_login
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from papers.models import Category, Paper
from peerrevenue import keep
from peerrevenue.pagination import paginate
from peerrevenue.queueing import send_from_request
from peerrevenue.ratelimit import refuse_if_too_many
from peerrevenue.redirects import safe_next

from . import bibtex, hot, notes, recommended, saves
from .models import Tag

PER_PAGE = 30

# A reader's picks: versioned by their shelf's fit (a save, a tag change or a refit moves it),
# the papers (an edit or a hidden paper) and the term set.
PICKS: keep.Cached[keep.Piece] = keep.Cached(
    "picks", stamps=("shelf", "papers", "terms"), size=keep.piece_size
)
# A period's hot list: versioned by the stored ranking (each refresh), the papers and the terms.
HOT: keep.Cached[keep.Piece] = keep.Cached(
    "hot", stamps=("hot", "papers", "terms"), size=keep.piece_size
)


def see_other(url: str) -> HttpResponseRedirect:
    """303: the browser follows with a GET, whatever the form's method was."""
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


def back_to(request: HttpRequest, fallback: str) -> str:
    """The form's ``next``, if it is an address on this site; else ``fallback``."""
    return safe_next(request) or fallback


def _refit_soon(user_id: int) -> None:
    from .tasks import refit_reader

    # robust: the save is committed; a refit that fails (tasks run eagerly without a broker)
    # is logged, and the five-minute catch-up refits the reader, but the save is not undone
    # in the reader's eyes by an error page.
    transaction.on_commit(
        lambda: send_from_request(refit_reader, args=(user_id,), what="a refit of recommendations"),
        robust=True,
    )


def _limited(request: HttpRequest, back: str) -> HttpResponse | None:
    return refuse_if_too_many(
        request,
        scope="save",
        limit=settings.RATELIMIT_SAVES_PER_WINDOW,
        done="saved, unsaved or tagged papers",
        back=back,
    )


@require_POST
def toggle_save(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    back = back_to(request, paper.get_absolute_url())
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    refused = _limited(request, back)
    if refused:
        return refused
    # The star says what it will do, so a double click or a resent form does it once;
    # without ``action`` the save toggles.
    action = request.POST.get("action")
    if action == "save":
        saves.save(user=request.user, paper=paper)
    elif action == "unsave":
        saves.unsave(user=request.user, paper=paper)
    else:
        saves.toggle(user=request.user, paper=paper)
    _refit_soon(request.user.pk)
    return see_other(back)


@require_POST
def set_tags(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    back = back_to(request, reverse("library:library"))
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    refused = _limited(request, back)
    if refused:
        return refused
    names = request.POST.get("tags", "").split(",")
    try:
        tags = saves.set_tags(user=request.user, paper=paper, names=names)
    except saves.LibraryError as refusal:
        messages.error(request, str(refusal))
    else:
        if tags:
            messages.success(request, f"Tags saved: {', '.join(t.name for t in tags)}.")
        else:
            messages.success(request, "Tags removed: the paper stays in your library.")
        _refit_soon(request.user.pk)
    return see_other(back)


@login_required
@require_POST
def mark_read(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_object_or_404(Paper, arxiv_id=arxiv_id)
    saves.mark_read(user=request.user, paper=paper, read=request.POST.get("read") == "1")
    return see_other(back_to(request, reverse("library:library")))


@login_required
@require_POST
def create_tag(request: HttpRequest) -> HttpResponse:
    try:
        tag = saves.create_tag(user=request.user, name=request.POST.get("name", ""))
    except saves.LibraryError as refusal:
        messages.error(request, str(refusal))
        return see_other(reverse("library:library"))
    return see_other(f"{reverse('library:library')}?tag={tag.pk}")


@login_required
@require_POST
def rename_tag(request: HttpRequest) -> HttpResponse:
    tag_id = _posted_tag_id(request)
    try:
        tag = saves.rename_tag(user=request.user, tag_id=tag_id, name=request.POST.get("name", ""))
    except Tag.DoesNotExist:
        raise Http404("You have no such tag.") from None
    except saves.LibraryError as refusal:
        messages.error(request, str(refusal))
        return see_other(f"{reverse('library:library')}?tag={tag_id}")
    messages.success(request, f"Renamed the tag to “{tag.name}”.")
    return see_other(f"{reverse('library:library')}?tag={tag.pk}")


@login_required
@require_POST
def delete_tag(request: HttpRequest) -> HttpResponse:
    tag_id = _posted_tag_id(request)
    try:
        name = saves.delete_tag(user=request.user, tag_id=tag_id)
    except Tag.DoesNotExist:
        raise Http404("You have no such tag.") from None
    messages.success(request, f"Deleted the tag “{name}”; its papers stay in your library.")
    return see_other(reverse("library:library"))


def _posted_tag_id(request: HttpRequest) -> int:
    # The tag is named in the form, not the address: no address outside the admin names a
    # reader's own thing (tests/security/test_access.py).
    wanted = request.POST.get("tag", "")
    if not wanted.isdigit():
        raise Http404("You have no such tag.")
    return int(wanted)


def _tag_of(request: HttpRequest) -> Tag | None:
    wanted = request.GET.get("tag", "")
    if not wanted:
        return None
    if not wanted.isdigit():
        raise Http404("No such tag.")
    # Only the reader's own: another's tag id is as absent as a made-up one.
    return get_object_or_404(Tag, user=request.user, pk=int(wanted))


@login_required
def library_page(request: HttpRequest) -> HttpResponse:
    tag = _tag_of(request)
    unread = request.GET.get("unread") == "1"
    page = paginate(
        request, saves.saved_papers(user=request.user, tag=tag, unread=unread), per_page=PER_PAGE
    )
    context = {
        "page": page,
        "tag": tag,
        "unread": unread,
        "tags": saves.tags_of(user=request.user),
        "total": saves.library_size(user=request.user),
        "nav": "library",
        "tag_name_max": 60,
    }
    return render(request, "library/library.html", context)


@login_required
def export(request: HttpRequest, kind: str) -> HttpResponse:
    tag = _tag_of(request)
    papers = [saved.paper for saved in saves.saved_papers(user=request.user, tag=tag)]
    name = f"library-{tag.name}" if tag else "library"
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in name)[:80]
    if kind == "bib":
        written = notes.notes_of(user=request.user, papers=papers)
        response = HttpResponse(
            bibtex.bibtex(papers, notes=written), content_type="text/x-bibtex; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{safe}.bib"'
    else:
        response = HttpResponse(bibtex.id_list(papers), content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{safe}.txt"'
    return response


def recommended_page(request: HttpRequest) -> HttpResponse:
    """The reader's picks as one piece kept per reader, under their shelf's fit (the
    ``shelf`` fact: a save, a tag change or a refit moves it), the papers (an edit or a hidden
    paper) and the term set: a request reads the facts in one query and fills the stars."""
    user_id = request.user.pk if request.user.is_authenticated else None
    hot.refresh_soon()
    facts = keep.read(request, "papers", "hot", ("shelf", user_id or 0))
    state, picks_html = "anonymous", ""
    saved: str | int | None = 0
    if user_id is not None:
        picks = PICKS.get(facts, user_id, make=lambda: _picks_piece(user_id=user_id, facts=facts))
        state, saved, picks_html = str(picks.values["state"]), picks.values["saved"], picks.html
    hot_html = hot_list(request, period="week", category=None).html if state != "ready" else ""
    return keep.respond(
        request,
        "library/recommended.html",
        {
            "nav": "recommended",
            "state": state,
            "saved": saved,
            "picks_html": picks_html,
            "hot_html": hot_html,
        },
        pieces=["picks_html", "hot_html"],
    )


def _picks_piece(*, user_id: int, facts: keep.Facts) -> keep.Piece:
    found = recommended.for_you(user_id=user_id, limit=PER_PAGE)
    html = keep.render_piece("library/_picks.html", {"picks": found.picks}, facts=facts)
    return keep.Piece(html, {"state": found.state, "saved": found.saved})


def hot_list(request: HttpRequest, *, period: str, category: str | None) -> keep.Piece:
    """The ranked list, kept under what it shows: the stored ranking (the ``hot`` fact, moved
    by each refresh), the papers (an edit or a hidden paper) and the term set. The view asks
    for a refresh (``hot.refresh_soon``) before it reads the facts, so that a refresh run in
    the request (tasks run eagerly without a broker) is shown by it."""
    facts = keep.facts_of(request)
    if ("papers",) not in facts.values or ("hot",) not in facts.values:
        facts = keep.read(request, "papers", "hot")
    return HOT.get(
        facts,
        period,
        category,
        make=lambda: _hot_piece(period=period, category=category, facts=facts),
    )


def _hot_piece(*, period: str, category: str | None, facts: keep.Facts) -> keep.Piece:
    rows = hot.hot_papers(period=period, category=category)
    # An empty list may be one the worker has not ranked yet (asked by hot.refresh_soon).
    ranked = bool(rows) or hot.ranked(period=period)
    html = keep.render_piece(
        "library/_hot_list.html",
        {"rows": rows, "ranked": ranked, "period": period, "save_weight": hot.SAVE_WEIGHT},
        facts=facts,
    )
    return keep.Piece(html)


def hot_page(request: HttpRequest) -> HttpResponse:
    period = request.GET.get("period", "week")
    if period not in hot.PERIODS:
        period = "week"
    code = request.GET.get("category") or None
    category = None
    if code is not None:
        category = Category.objects.filter(code=code).first()
        if category is None:
            raise Http404(f"There is no category “{code}”.")
    hot.refresh_soon()
    facts = keep.read(request, "papers", "hot")
    return keep.anonymous_page(
        request,
        facts,
        lambda: keep.respond(
            request,
            "library/hot.html",
            {
                "hot_html": hot_list(request, period=period, category=code).html,
                "period": period,
                "periods": list(hot.PERIODS),
                "category": category,
                "nav": "hot",
            },
            pieces=["hot_html"],
        ),
    )


@require_POST
def write_note(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    paper = get_object_or_404(Paper.objects.visible(), arxiv_id=arxiv_id)
    back = back_to(request, paper.get_absolute_url()) + "#note"
    if not request.user.is_authenticated:
        return redirect_to_login(back)
    refused = _limited(request, back)
    if refused:
        return refused
    try:
        kept = notes.write(user=request.user, paper=paper, text=request.POST.get("text", ""))
    except notes.NoteError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, "Your note is saved." if kept else "Your note is removed.")
    return see_other(back)
