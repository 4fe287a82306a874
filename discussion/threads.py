"""Reading a thread: its comments a page at a time, sorted by votes then time, and the kept
HTML of that page.

The page's HTML is the same for every reader, so it is kept (peerrevenue.keep) under the
thread's own stamp, which the database moves on any change of its comments or votes
(discussion/sql/stamps.sql): a comment elsewhere renders nothing here again. What belongs to
the reader (their vote, their own comment's edit and delete, the forms with their CSRF
token) and what moves with trades (a writer's holding on a term's page) are places marked in
the kept HTML, ``<!--actions:N-->`` (``reply-actions`` for a reply) and
``<!--holds:USER-->`` (on a paper's page ``<!--author:USER-->``, the verified author's mark),
filled per request (``discussion.fillers``). The marks cannot come
from a comment: bodies are sanitised with comments stripped, names escaped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.db.models import Q
from django.utils.safestring import mark_safe

from peerrevenue import keep

from .models import Comment, Thread

PER_PAGE = 50
_MARK = re.compile(r"<!--(actions|reply-actions|holds|author|reader):(\d*)-->")


@dataclass(frozen=True, slots=True)
class ThreadPage:
    comments: list[Comment]  # top-level, each with ``shown_replies``
    page: int
    pages: int
    count: int  # comments neither deleted nor hidden, replies included


@dataclass(frozen=True, slots=True)
class KeptThread:
    """A page of a thread as kept: texts around its places, the places as (kind, argument)."""

    texts: tuple[str, ...]
    places: tuple[tuple[str, str], ...]
    page: int
    pages: int

    def __len__(self) -> int:
        return sum(map(len, self.texts))

    def join(self, fills: dict[tuple[str, str], str]) -> str:
        out = [self.texts[0]]
        for place, text in zip(self.places, self.texts[1:], strict=True):
            out += [fills.get(place, ""), text]
        return "".join(out)

    def comments(self) -> list[tuple[str, int]]:
        """The comments' places: ("actions", id) for a top-level one, ("reply-actions", id)
        for a reply."""
        return [(kind, int(arg)) for kind, arg in self.places if kind.endswith("actions")]

    def writer_ids(self) -> list[int]:
        return sorted({int(arg) for kind, arg in self.places if kind in ("holds", "author")})


def ordered(queryset):
    return queryset.order_by("-score", "created_at", "id")


def page_of(*, thread: Thread, page: int) -> ThreadPage:
    tops = Comment.objects.filter(thread=thread, parent__isnull=True)
    pages = max(1, math.ceil(tops.count() / PER_PAGE))
    page = min(max(page, 1), pages)
    shown = list(ordered(tops.select_related("author"))[(page - 1) * PER_PAGE : page * PER_PAGE])
    replies: dict[int, list[Comment]] = {comment.pk: [] for comment in shown}
    for reply in ordered(Comment.objects.filter(parent__in=list(replies)).select_related("author")):
        replies[reply.parent_id].append(reply)
    for comment in shown:
        comment.shown_replies = replies[comment.pk]
    return ThreadPage(shown, page, pages, thread.comment_count)


def page_of_comment(comment: Comment) -> int:
    """Which page of its thread shows ``comment`` (a reply: where its parent is)."""
    top = comment.parent or comment
    before = Comment.objects.filter(thread_id=top.thread_id, parent__isnull=True).filter(
        Q(score__gt=top.score)
        | Q(score=top.score, created_at__lt=top.created_at)
        | Q(score=top.score, created_at=top.created_at, id__lt=top.pk)
    )
    return before.count() // PER_PAGE + 1


def kept_page(
    *, thread: Thread | None, names: int, page: int, on_term: bool, facts: keep.Facts
) -> KeptThread:
    """The page's HTML, kept under the thread's stamp and ``names`` (the traders stamp: a
    writer renamed) (a thread not yet started: empty)."""
    if thread is None:
        return _render(None, on_term=on_term, facts=facts)
    return keep.get_or_make(
        keep.key("thread", thread.pk, thread.stamp, names, page, on_term),
        lambda: _render(page_of(thread=thread, page=page), on_term=on_term, facts=facts),
        size=len,
    )


def _comment_html(comments: list[Comment], *, on_term: bool, facts: keep.Facts) -> None:
    """Each comment's HTML, kept per comment and what it shows (its votes, edit, deletion,
    hiding, writer's name): after a new comment only that one is rendered, the rest joined."""
    every = [c for top in comments for c in [top, *top.shown_replies]]  # type: ignore[attr-defined]
    names = {
        comment: keep.key(
            "comment",
            comment.pk,
            comment.parent_id,
            comment.score,
            comment.created_at,
            comment.edited_at,
            comment.deleted_at,
            comment.hidden_at,
            comment.hidden_reason,
            comment.author.get_username(),
            on_term,
        )
        for comment in every
    }

    def make(missing: list[Comment]) -> dict[Comment, str]:
        return {
            comment: keep.render_piece(
                "discussion/_comment.html", {"comment": comment, "on_term": on_term}, facts=facts
            )
            for comment in missing
        }

    made = keep.get_or_make_many(names, make, size=len)
    for comment in every:
        comment.html = mark_safe(made[comment])  # noqa: S308 - rendered above


def _render(found: ThreadPage | None, *, on_term: bool, facts: keep.Facts) -> KeptThread:
    if found is not None:
        _comment_html(found.comments, on_term=on_term, facts=facts)
    context = {
        "comments": found.comments if found else [],
        "count": found.count if found else 0,
        "on_term": on_term,
        "page": found.page if found else 1,
        "pages": found.pages if found else 1,
    }
    html = keep.render_piece("discussion/_thread.html", context, facts=facts)
    parts = _MARK.split(html)
    return KeptThread(
        texts=tuple(parts[::3]),
        places=tuple(zip(parts[1::3], parts[2::3], strict=True)),
        page=found.page if found else 1,
        pages=found.pages if found else 1,
    )
