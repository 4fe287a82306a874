"""A reader's library through a token: save and unsave papers, set their tags, list them.
Through ``library.saves``, the functions the library's pages call, with the web's limit on
saves and tags (one count for both)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from ninja import Router

from library import saves
from library.tasks import refit_reader
from papers.models import Paper
from peerrevenue.queueing import send_from_request
from peerrevenue.ratelimit import is_limited, seconds_until_reset, wait_text

from . import action_schemas as schemas
from . import auth, conditional
from .problems import Problem

router = Router(tags=["library"])


def _paper(arxiv_id: str) -> Paper:
    paper = Paper.objects.visible().filter(arxiv_id=arxiv_id).first()
    if paper is None:
        raise Http404(f"There is no paper {arxiv_id} here.")
    return paper


def _limited(user) -> None:
    window = settings.RATELIMIT_WINDOW_SECONDS
    limit = settings.RATELIMIT_SAVES_PER_WINDOW
    if is_limited("save", f"user:{user.pk}", limit=limit, window_seconds=window):
        wait = seconds_until_reset(window_seconds=window)
        raise Problem(
            429,
            f"You have saved, unsaved or tagged papers {limit:,} times in the last "
            f"{wait_text(window)}, the most we take. Nothing was changed; try again in "
            f"{wait_text(wait)}.",
            headers={"Retry-After": str(wait)},
        )


def _refit_soon(user_id: int) -> None:
    # As the library's pages do: the reader's picks are refitted after the change commits;
    # a refit that cannot be queued is caught up by the five-minute sweep.
    transaction.on_commit(
        lambda: send_from_request(refit_reader, args=(user_id,), what="a refit of recommendations"),
        robust=True,
    )


def _saved(user, paper: Paper) -> schemas.SavedOut:
    row = saves.saved_papers(user=user).filter(paper=paper).first()
    return schemas.SavedOut(
        arxiv_id=paper.arxiv_id,
        saved=row is not None,
        tags=[tag.name for tag in row.tags.all()] if row is not None else [],
    )


@router.get("/library", response=schemas.Shelf, auth=auth.READ_PRIVATE, summary="Your library")
def library(request: HttpRequest) -> HttpResponse:
    """Newest save first (at most 1,000)."""
    user = auth.token_of(request).user
    rows = saves.saved_papers(user=user)[:1000]
    return conditional.private(
        schemas.Shelf(
            items=[
                schemas.SavedOut(
                    arxiv_id=row.paper.arxiv_id, saved=True, tags=[t.name for t in row.tags.all()]
                )
                for row in rows
            ]
        )
    )


def _checked(request: HttpRequest, arxiv_id: str) -> tuple[Any, Paper]:
    """Every change's checks, in the order a program is told of them: the paper, then the
    limit on saves and tags."""
    user = auth.token_of(request).user
    paper = _paper(arxiv_id)
    _limited(user)
    return user, paper


def _saved_or_not(request: HttpRequest, arxiv_id: str, change: Callable[..., bool]) -> HttpResponse:
    user, paper = _checked(request, arxiv_id)
    if change(user=user, paper=paper):  # true when it changed the library
        _refit_soon(user.pk)
    return conditional.private(_saved(user, paper))


@router.put(
    "/library/{arxiv_id}", response=schemas.SavedOut, auth=auth.LIBRARY, summary="Save a paper"
)
def save(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    return _saved_or_not(request, arxiv_id, saves.save)


@router.delete(
    "/library/{arxiv_id}", response=schemas.SavedOut, auth=auth.LIBRARY, summary="Unsave a paper"
)
def unsave(request: HttpRequest, arxiv_id: str) -> HttpResponse:
    return _saved_or_not(request, arxiv_id, saves.unsave)


@router.put(
    "/library/{arxiv_id}/tags",
    response=schemas.SavedOut,
    auth=auth.LIBRARY,
    summary="Set a saved paper's tags",
)
def set_tags(request: HttpRequest, arxiv_id: str, body: schemas.TagsIn) -> HttpResponse:
    """The paper's tags become exactly these (saving it first if need be)."""
    user, paper = _checked(request, arxiv_id)
    if len(body.tags) > 100:
        raise Problem(400, "Send at most 100 tags.")
    saves.set_tags(user=user, paper=paper, names=body.tags)
    _refit_soon(user.pk)
    return conditional.private(_saved(user, paper))
