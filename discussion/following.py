"""Telling readers about a thread without noise: a reply to them, or a comment in a thread
they follow, is a ``News`` row gathered into ONE market notice per reader (``market.notices``:
shown once on their next page, then in the digest), rewritten as news arrives: ten comments
make one notice that says ten, never ten notices.

Following is opt-in (``writing.follow``); a writer is never told of their own comment.
"""

from __future__ import annotations

from django.db import connection

from market.models.notices import Notice

from .models import Comment, Follow, News
from .targets import of_thread

KIND = "discussion"  # market Notice.kind
SHOWN_TITLES = 3


def tell_about(*, comment: Comment, parent: Comment | None) -> None:
    """In the comment's transaction: nothing is told of a comment that was not stored."""
    told: dict[int, bool] = {
        user_id: False
        for user_id in Follow.objects.filter(thread_id=comment.thread_id)
        .exclude(user_id=comment.author_id)
        .values_list("user_id", flat=True)
    }
    if parent is not None and parent.author_id != comment.author_id:
        told[parent.author_id] = True
    for user_id in sorted(told):  # one order, so two comments' writers lock readers alike
        notice = _open_notice(user_id)
        News.objects.create(user_id=user_id, comment=comment, is_reply=told[user_id], notice=notice)
        notice.text = batched_text(notice)
        notice.save(update_fields=["text"])


def _open_notice(user_id: int) -> Notice:
    """The reader's discussion notice not yet shown nor mailed, or a new one: with the
    reader's lock held, so two comments at once add to one notice rather than make two."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [4_100_042, user_id])
    found = Notice.objects.filter(
        user_id=user_id, kind=KIND, seen_at__isnull=True, digested_at__isnull=True
    ).first()
    if found is None:
        found = Notice.objects.create(user_id=user_id, kind=KIND, text="")
    return found


def batched_text(notice: Notice) -> str:
    replies: dict[int, int] = {}
    followed: dict[int, int] = {}
    for is_reply, thread_id in News.objects.filter(notice=notice).values_list(
        "is_reply", "comment__thread_id"
    ):
        into = replies if is_reply else followed
        into[thread_id] = into.get(thread_id, 0) + 1
    sentences = []
    if replies:
        count = sum(replies.values())
        sentences.append(
            f"{count} {'reply' if count == 1 else 'replies'} to you on {_titles(replies)}."
        )
    if followed:
        count = sum(followed.values())
        sentences.append(
            f"{count} new comment{'' if count == 1 else 's'} in discussions you follow:"
            f" {_titles(followed)}."
        )
    return " ".join(sentences)


def _titles(counts: dict[int, int]) -> str:
    from .models import Thread

    threads = Thread.objects.filter(pk__in=list(counts)[:SHOWN_TITLES])
    names = [of_thread(thread).title_and_url()[0] for thread in threads]
    more = len(counts) - len(names)
    return ", ".join(names) + (f" and {more} more" if more > 0 else "")
