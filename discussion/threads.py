"""Reading a thread: its comments a page at a time, sorted by votes then time, and the kept
HTML of that page.

The page's HTML is the same for every reader, so it is kept (peerrevenue.keep) under what
it shows: the page's comments, each by its own stamp, which the database moves on any change
of the comment or its votes (discussion/sql/stamps.sql), and the writers' names (the traders
stamp). Which comments a page shows is read again only when the thread's stamp moves, so a
comment posted elsewhere in the thread (a later page) reads the page's stamps once and renders
nothing. What belongs to the reader (their vote, their own comment's edit and delete, the
forms with their CSRF token), what moves with every comment (the thread's count) and what
moves with trades (a writer's holding on a term's page) are places marked in the kept HTML,
``<!--actions:N-->`` (``reply-actions`` for a reply), ``<!--count:-->`` and
``<!--holds:USER-->`` (on a paper's page ``<!--author:USER-->``, the verified author's mark),
filled per request (``discussion.fillers``). The marks cannot come from a comment: bodies
are sanitised with comments stripped, names escaped.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import re
from dataclasses import dataclass, field

from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import Q
from django.utils.safestring import mark_safe

from peerrevenue import keep, replicas
from peerrevenue.db import prepared_rows

from .models import Comment, Thread

PER_PAGE = 50
COUNT = ("count", "")
_MARK = re.compile(r"<!--(actions|reply-actions|holds|author|reader|count):(\d*)-->")


@dataclass(frozen=True, slots=True)
class ThreadPage:
    """Which comments a page of a thread shows, in order, and each one's stamp."""

    comments: list[ShownComment]  # top-level, each with ``shown_replies``
    page: int
    pages: int

    def __len__(self) -> int:  # its share of this process's budget: a few numbers a comment
        return 16 * sum(1 + len(top.shown_replies) for top in self.comments)

    def digest(self) -> str:
        """What the page shows, in a few characters: its comments (ids, places, stamps) and
        its pages."""
        shown = [
            (c.pk, c.parent_id, c.stamp) for top in self.comments for c in [top, *top.shown_replies]
        ]
        text = repr((self.page, self.pages, shown)).encode()
        return hashlib.blake2b(text, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class KeptThread:
    """A page of a thread as kept: texts around its places, the places as (kind, argument)."""

    texts: tuple[str, ...]
    places: tuple[tuple[str, str], ...]
    page: int
    pages: int
    name: str  # what it is kept under: a key for what is made of it

    def __len__(self) -> int:
        return sum(map(len, self.texts))

    def join(self, fills: dict[tuple[str, str], str]) -> tuple[str, str]:
        """The page with its places filled but for ``count`` (the thread's count, which moves
        with every comment, where nothing else of the page may): the texts before and after
        it."""
        out: list[str] = [self.texts[0]]
        before: list[str] = []
        for place, text in zip(self.places, self.texts[1:], strict=True):
            if place == COUNT:
                before, out = out, [text]
            else:
                out += [fills.get(place, ""), text]
        return "".join(before), "".join(out)

    def comments(self) -> list[tuple[str, int]]:
        """The comments' places: ("actions", id) for a top-level one, ("reply-actions", id)
        for a reply."""
        return [(kind, int(arg)) for kind, arg in self.places if kind.endswith("actions")]

    def writer_ids(self) -> list[int]:
        return sorted({int(arg) for kind, arg in self.places if kind in ("holds", "author")})


def ordered(queryset):
    return queryset.order_by("-score", "created_at", "id")


@dataclass(frozen=True, slots=True)
class ShownComment:
    """A comment as a page of its thread places it: its id, its parent and its ``stamp``,
    which the database moves on any change of the comment (an edit, a vote, a deletion, a
    hiding). That, with the writers' names, is what its kept HTML is keyed by; what it shows
    is read only for a comment whose HTML is made (``_comment_html``): a page's 250 rows
    are read again when its thread changes, and loading their times, texts and names costs
    more than the one comment rendered."""

    pk: int
    parent_id: int | None
    stamp: int
    shown_replies: list[ShownComment] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Drawn:
    """What a comment's kept HTML shows (discussion/_comment.html)."""

    pk: int
    parent_id: int | None
    author_id: int
    writer_name: str
    created_at: dt.datetime
    edited_at: dt.datetime | None
    deleted_at: dt.datetime | None
    hidden_at: dt.datetime | None
    hidden_reason: str
    score: int
    body_html: str

    @property
    def is_visible(self) -> bool:
        return self.deleted_at is None and self.hidden_at is None


# A page's top-level comments (the page number held within the thread's pages) and their
# replies, in one statement, in the thread's order: votes, then time.
_PAGE_SQL = """
WITH counted AS (
    SELECT count(*) AS tops FROM discussion_comment
    WHERE thread_id = %(thread)s AND parent_id IS NULL
), held AS (
    SELECT tops, LEAST(GREATEST(%(page)s, 1), GREATEST(1, CEIL(tops / %(per)s::numeric)))::int
        AS page
    FROM counted
), shown AS (
    SELECT c.id FROM discussion_comment AS c
    WHERE c.thread_id = %(thread)s AND c.parent_id IS NULL
    ORDER BY c.score DESC, c.created_at, c.id
    OFFSET (SELECT (page - 1) * %(per)s FROM held) LIMIT %(per)s
), picked AS (
    SELECT c.id, c.parent_id, c.stamp, c.score, c.created_at FROM discussion_comment AS c
    WHERE c.id IN (SELECT id FROM shown)
    UNION ALL
    SELECT c.id, c.parent_id, c.stamp, c.score, c.created_at FROM discussion_comment AS c
    WHERE c.parent_id IN (SELECT id FROM shown)
)
SELECT held.page, held.tops, r.id, r.parent_id, r.stamp
FROM held LEFT JOIN picked AS r ON true
ORDER BY r.score DESC, r.created_at, r.id
"""

# Comments as their kept HTML shows them (``_Drawn``'s fields, in order), with what that
# HTML is keyed by (the comment's stamp and the writers' names: the traders stamp) and
# whether their thread is a term's.
_DRAWN_SQL = """
SELECT r.stamp, (SELECT value FROM kept_stamp WHERE name = 'traders'), t.term_id IS NOT NULL,
       r.id, r.parent_id, r.author_id, u.username, r.created_at, r.edited_at, r.deleted_at,
       r.hidden_at, r.hidden_reason, r.score, r.body_html
FROM discussion_comment AS r
JOIN auth_user AS u ON u.id = r.author_id
JOIN discussion_thread AS t ON t.id = r.thread_id
WHERE r.id = ANY(%(ids)s)
"""


def _read_drawn(
    ids: list[int], *, using: BaseDatabaseWrapper
) -> dict[int, tuple[int, int, bool, _Drawn]]:
    """Each comment's stamp, the traders stamp, whether it is on a term, and what its HTML
    shows."""
    rows = prepared_rows(_DRAWN_SQL, {"ids": ids}, using=using)
    return {row[3]: (row[0], row[1] or 0, row[2], _Drawn(*row[3:])) for row in rows}


def page_of(*, thread: Thread, page: int) -> ThreadPage:
    rows = prepared_rows(
        _PAGE_SQL,
        {"thread": thread.pk, "page": page, "per": PER_PAGE},
        using=replicas.reading_connection(),
    )
    shown: list[ShownComment] = []
    replies: list[ShownComment] = []
    for row in rows:
        if row[2] is not None:
            comment = ShownComment(*row[2:])
            (replies if comment.parent_id else shown).append(comment)
    by_id = {comment.pk: comment for comment in shown}
    for reply in replies:
        by_id[reply.parent_id].shown_replies.append(reply)  # type: ignore[index]
    held, tops = rows[0][0], rows[0][1]
    return ThreadPage(shown, held, max(1, math.ceil(tops / PER_PAGE)))


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
    """The page's HTML, kept under what it shows: which comments and their stamps (read again
    when the thread's stamp moves) and ``names`` (the traders stamp: a writer renamed). A
    thread not yet started: empty."""
    if thread is None:
        return _render(None, names=names, on_term=on_term, facts=facts, name="")
    # In this process only, both: after a change another process reads the page's stamps and
    # joins the comments' own kept HTML (one get_many), as this one does, rather than this
    # one writing 250 comments' worth to the shared cache that most processes never read.
    shown = keep.get_or_make(
        keep.key("thread", thread.pk, thread.stamp, page),
        lambda: page_of(thread=thread, page=page),
        size=len,
        shared=False,
    )
    name = keep.key("thread-page", thread.pk, shown.digest(), names, on_term)
    return keep.get_or_make(
        name,
        lambda: _render(shown, names=names, on_term=on_term, facts=facts, name=name),
        size=len,
        shared=False,
    )


def _comment_html(
    comments: list[ShownComment], *, names: int, on_term: bool, facts: keep.Facts
) -> dict[int, str]:
    """Each comment's HTML by id, kept per comment, its stamp and the writers' names: after
    a new comment only that one is rendered, the rest joined."""
    every = [c for top in comments for c in [top, *top.shown_replies]]
    keys = {c.pk: keep.key("comment", c.pk, c.stamp, names, on_term) for c in every}

    def make(missing: list[int]) -> dict[int, str]:
        # What just these comments show, in one query (page_of reads only their stamps).
        # Read after the stamps: a change in between is at worst kept under the stamp
        # before it, which the thread's next read no longer asks for.
        drawn = _read_drawn(missing, using=replicas.reading_connection())
        return {
            pk: _drawn_html(drawn[pk][3], on_term=on_term, facts=facts)
            for pk in missing
            if pk in drawn
        }

    return keep.get_or_make_many(keys, make, size=len)


def _drawn_html(comment: _Drawn, *, on_term: bool, facts: keep.Facts) -> str:
    return keep.render_piece(
        "discussion/_comment.html", {"comment": comment, "on_term": on_term}, facts=facts
    )


def keep_comment_html(comment_id: int) -> None:
    """Make a comment's kept HTML once a write to it has committed (``discussion.writing``,
    ``discussion.moderation``): the thread's next render, by whoever reads it, then joins it
    with the others' instead of reading and rendering it, and the writer's own request pays
    for it. Keyed as ``_comment_html`` keys it, so a stamp this misses is made there."""
    # The primary: the write that just committed is there, and perhaps not yet on a replica.
    found = _read_drawn([comment_id], using=connection).get(comment_id)
    if found is None:
        return
    stamp, names, on_term, drawn = found
    keep.get_or_make(
        keep.key("comment", comment_id, stamp, names, on_term),
        # The template reads no fact: a comment shows only its own row and writer.
        lambda: _drawn_html(drawn, on_term=on_term, facts=keep.Facts({})),
        size=len,
    )


def _items(comments: list[ShownComment], html: dict[int, str]) -> str:
    """The thread's list items, joined here: a template loop over 250 comments costs more
    than the one comment a new post renders (``_comment_html``)."""
    out: list[str] = []
    for top in comments:
        out += ["<li>", html.get(top.pk, "")]
        replies = top.shown_replies
        if replies:
            out.append('<ol class="discussion__replies" aria-label="Replies">')
            for reply in replies:
                out += ["<li>", html.get(reply.pk, ""), "</li>"]
            out.append("</ol>")
        out.append("</li>")
    return mark_safe("".join(out))  # noqa: S308 - kept comment HTML, rendered escaped


def _render(
    found: ThreadPage | None, *, names: int, on_term: bool, facts: keep.Facts, name: str
) -> KeptThread:
    items = ""
    if found is not None:
        html = _comment_html(found.comments, names=names, on_term=on_term, facts=facts)
        items = _items(found.comments, html)
    context = {
        "comments": items,
        "on_term": on_term,
        "page": found.page if found else 1,
        "pages": found.pages if found else 1,
    }
    rendered = keep.render_piece("discussion/_thread.html", context, facts=facts)
    parts = _MARK.split(rendered)
    return KeptThread(
        texts=tuple(parts[::3]),
        places=tuple(zip(parts[1::3], parts[2::3], strict=True)),
        page=found.page if found else 1,
        pages=found.pages if found else 1,
        name=name,
    )
