"""Writing in a thread: post, reply, edit, delete, vote, report, follow.

Keyword-only functions of the domain; each checks what it must (rules.py) and raises
``rules.Refused`` with the sentence to show, having changed nothing.
"""

from __future__ import annotations

from django.db import connection, transaction
from django.utils import timezone

from . import following, markup, rules, threads
from .models import Comment, Follow, Report, Vote
from .targets import Target


def post(*, user, target: Target, body: str, key: str, parent_id: int | None = None) -> Comment:
    """A new comment (``parent_id``: a reply), or the one this form's ``key`` already stored."""
    body = rules.clean_body(body)
    print_ = rules.fingerprint(body)
    if not key or len(key) > 64:
        raise rules.Refused("The form was incomplete; reload the page and write again.")
    with transaction.atomic():
        # One writer's comments one at a time (a transaction lock: nothing outlives the
        # transaction, so a pooler may hand the connection on): the form sent twice at once
        # stores one, and the day's counts and the duplicate check count every comment.
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [4_100_041, user.pk])
        already = Comment.objects.filter(author=user, key=key).first()
        if already is not None:
            return already
        now = timezone.now()
        rules.check_new_comment(user, body=body, print_=print_, now=now)
        if not target.exists():
            raise rules.Refused("There is nothing here to comment on any more.")
        thread = target.thread_or_new()
        parent = None
        if parent_id is not None:
            parent = Comment.objects.filter(pk=parent_id, thread=thread).first()
            if parent is None:
                raise rules.Refused("The comment you replied to is not in this discussion.")
            # Replies are one level deep: a reply to a reply joins its parent's replies.
            parent = parent.parent or parent
        comment = Comment.objects.create(
            thread=thread,
            parent=parent,
            author=user,
            body=body,
            body_html=markup.render(body),
            fingerprint=print_,
            key=key,
        )
        following.tell_about(comment=comment, parent=parent)
        keep_html_after_commit(comment.pk)
    return comment


def keep_html_after_commit(comment_id: int) -> None:
    """The comment's kept HTML made as soon as this write commits (``threads.keep_comment_html``).
    After the commit, so that it shows what was committed and no lock is held while it
    renders; robust, because the write has committed: a cache that is down then costs the
    next reader a render, and never reports the write as failed."""

    # A function of its own rather than a partial: Django names it when it logs a failure.
    def keep_comment_html() -> None:
        threads.keep_comment_html(comment_id)

    transaction.on_commit(keep_comment_html, robust=True)


def own_comment(*, user, comment_id: int) -> Comment:
    comment = Comment.objects.select_for_update().filter(pk=comment_id, author=user).first()
    if comment is None:
        raise rules.Refused("That comment is not yours to change.")
    return comment


def edit(*, user, comment_id: int, body: str) -> Comment:
    body = rules.clean_body(body)
    with transaction.atomic():
        rules.check_writer(user)
        comment = own_comment(user=user, comment_id=comment_id)
        now = timezone.now()
        if not rules.may_edit(comment, now=now):
            minutes = int(rules.EDIT_WINDOW.total_seconds() // 60)
            raise rules.Refused(f"A comment can be edited for {minutes} minutes after posting.")
        if rules.is_new(user, now=now) and markup.has_links(body):
            raise rules.Refused(
                f"Accounts younger than {rules.NEW_ACCOUNT_DAYS} days cannot post links yet."
            )
        comment.body = body
        comment.body_html = markup.render(body)
        comment.fingerprint = rules.fingerprint(body)
        comment.edited_at = now
        comment.save(update_fields=["body", "body_html", "fingerprint", "edited_at"])
        keep_html_after_commit(comment.pk)
    return comment


def delete(*, user, comment_id: int) -> Comment:
    """The writer takes their comment back: its place stays ("deleted"), so replies to it
    still read as replies; its text is gone from the database too."""
    with transaction.atomic():
        comment = own_comment(user=user, comment_id=comment_id)
        if comment.deleted_at is None:
            comment.deleted_at = timezone.now()
            comment.body = ""
            comment.body_html = ""
            comment.save(update_fields=["deleted_at", "body", "body_html"])
            keep_html_after_commit(comment.pk)
    return comment


def vote(*, user, comment_id: int, up: bool) -> None:
    """One upvote per reader: a second vote, even at the same instant, stores nothing (the
    unique constraint, met by ON CONFLICT rather than an error)."""
    comment = Comment.objects.filter(pk=comment_id).only("author_id", "deleted_at").first()
    if comment is None or comment.deleted_at is not None:
        raise rules.Refused("That comment is gone.")
    if comment.author_id == user.pk:
        raise rules.Refused("Your own comments cannot be voted up by you.")
    # The vote moves the comment's score (discussion/sql), which its kept HTML shows.
    with transaction.atomic():
        if up:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"INSERT INTO {Vote._meta.db_table} (comment_id, user_id, created_at)"  # noqa: S608
                    " VALUES (%s, %s, now()) ON CONFLICT (comment_id, user_id) DO NOTHING",
                    [comment_id, user.pk],
                )
        else:
            Vote.objects.filter(comment_id=comment_id, user=user).delete()
        keep_html_after_commit(comment_id)


def report(*, user, comment_id: int, reason: str, details: str = "") -> bool:
    """A reader reports a comment for the curators' queue; True if it is new (a second report
    by the same reader is the same report)."""
    if reason not in Report.Reason.values:
        raise rules.Refused("Choose why you report the comment.")
    if not Comment.objects.filter(pk=comment_id).exists():
        raise rules.Refused("That comment is gone.")
    _, made = Report.objects.get_or_create(
        comment_id=comment_id,
        reporter=user,
        defaults={"reason": reason, "details": details.strip()[:500]},
    )
    return made


def follow(*, user, target: Target, on: bool) -> None:
    if not target.exists():
        raise rules.Refused("There is nothing here to follow any more.")
    thread = target.thread_or_new()
    if on:
        Follow.objects.get_or_create(thread=thread, user=user)
    else:
        Follow.objects.filter(thread=thread, user=user).delete()
