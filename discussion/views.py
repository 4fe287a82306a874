"""The discussion's pages and forms: thin, each parses the form, calls one function of
``writing`` and goes back where the reader was with what happened said."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_POST

from peerrevenue.ratelimit import refuse_if_signed_out_or_too_many
from peerrevenue.redirects import safe_next

from . import rules, threads, writing
from .models import Comment
from .targets import Target, of_thread


def _see_other(url: str) -> HttpResponseRedirect:
    response = HttpResponseRedirect(url)
    response.status_code = 303  # the browser follows with a GET
    return response


def _refused_first(request: HttpRequest, back: str) -> HttpResponse | None:
    """Sign-in, then the per-user write limit: every write here counts against it."""
    return refuse_if_signed_out_or_too_many(
        request,
        scope="discussion",
        limit=rules.WRITES_PER_WINDOW,
        done="written, voted or reported in discussions",
        back=back,
    )


def _int(value: str | None) -> int | None:
    return int(value) if value and value.isdigit() and len(value) < 18 else None


def comment_url(comment: Comment) -> str:
    """Where a comment is read in its thread: the target's page, at the comment's page."""
    _, url = of_thread(comment.thread).title_and_url()
    page = threads.page_of_comment(comment)
    return f"{url}{f'?comments={page}' if page > 1 else ''}#comment-{comment.pk}"


@require_POST
def post(request: HttpRequest) -> HttpResponse:
    target = Target.parse(request.POST.get("target", ""))
    back = safe_next(request) or "/"
    refused = _refused_first(request, back)
    if refused:
        return refused
    if target is None:
        messages.error(request, "The form was incomplete; nothing was posted.")
        return _see_other(back)
    parent = _int(request.POST.get("parent"))
    body = request.POST.get("body", "")
    # The form's key with the text's print: the same form sent twice stores one comment, and a
    # second comment from a form left open is not taken for the first.
    key = f"{request.POST.get('key', '')[:32]}:{rules.fingerprint(body)[:16]}"
    try:
        comment = writing.post(
            user=request.user, target=target, body=body, key=key, parent_id=parent
        )
    except rules.Refused as refusal:
        messages.error(request, str(refusal))
        return _see_other(back)
    messages.success(request, "Your reply is posted." if parent else "Your comment is posted.")
    return _see_other(comment_url(comment))


def _write(request: HttpRequest, act: Callable[[], object], done: str | None) -> HttpResponse:
    """One write on a comment from a form: signed in and under the limit, ``act`` runs, and
    the reader goes back with the refusal or ``done`` (nothing said when it is None)."""
    back = safe_next(request) or "/"
    refused = _refused_first(request, back)
    if refused:
        return refused
    try:
        act()
    except rules.Refused as refusal:
        messages.error(request, str(refusal))
    else:
        if done is not None:
            messages.success(request, done)
    return _see_other(back)


@require_POST
def edit(request: HttpRequest, pk: int) -> HttpResponse:
    body = request.POST.get("body", "")
    return _write(
        request,
        lambda: writing.edit(user=request.user, comment_id=pk, body=body),
        "Your comment is saved.",
    )


@require_POST
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    return _write(
        request,
        lambda: writing.delete(user=request.user, comment_id=pk),
        "Your comment is deleted; its place in the thread stays.",
    )


@require_POST
def vote(request: HttpRequest, pk: int) -> HttpResponse:
    up = request.POST.get("up") != "0"
    return _write(request, lambda: writing.vote(user=request.user, comment_id=pk, up=up), None)


@require_POST
def report(request: HttpRequest, pk: int) -> HttpResponse:
    reason = request.POST.get("reason", "")
    details = request.POST.get("details", "")
    return _write(
        request,
        lambda: writing.report(user=request.user, comment_id=pk, reason=reason, details=details),
        "Thank you: the curators will look at the comment.",
    )


@require_POST
def follow(request: HttpRequest) -> HttpResponse:
    target = Target.parse(request.POST.get("target", ""))
    on = request.POST.get("on") != "0"

    def act() -> None:
        if target is None:
            raise rules.Refused("The form was incomplete; nothing was changed.")
        writing.follow(user=request.user, target=target, on=on)

    return _write(
        request,
        act,
        "You follow this discussion: new comments come as one notice and in your digest."
        if on
        else "You no longer follow this discussion.",
    )


def comment(request: HttpRequest, pk: int) -> HttpResponse:
    """A comment's own page: it, its replies (or the comment it replies to), and a link to
    its place in the thread."""
    found = get_object_or_404(
        Comment.objects.select_related("author", "thread", "parent__author"), pk=pk
    )
    target = of_thread(found.thread)
    try:
        title, _ = target.title_and_url()
    except Exception as gone:  # the paper or term was removed under the thread
        raise Http404("That discussion is gone.") from gone
    replies = list(threads.ordered(Comment.objects.filter(parent=found).select_related("author")))
    return render(
        request,
        "discussion/comment.html",
        {
            "comment": found,
            "replies": replies,
            "title": title,
            "in_thread": comment_url(found),
        },
    )
