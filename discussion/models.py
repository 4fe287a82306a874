"""What readers say: threads (one per paper, one per term), comments, votes, follows, reports
and suspensions.

A thread's ``stamp`` and ``comment_count`` are the database's to keep (discussion/sql/
stamps.sql): any write of a comment or a vote, by the site, the admin or psql, moves them, so
the kept pieces keyed by them (``discussion.threads``) and the counts on list pages never show
a thread as it was.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class Thread(models.Model):
    """The discussion of one paper or one term: created by its first comment or follow."""

    paper = models.OneToOneField(
        "papers.Paper", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    term = models.OneToOneField(
        "market.Term", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # Drawn from kept_stamp_seq by a BEFORE trigger; bumped by the comments' and votes' triggers.
    stamp = models.BigIntegerField(default=0, editable=False)
    # Comments neither deleted nor hidden, kept by the comments' triggers.
    comment_count = models.IntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(paper__isnull=False, term__isnull=True)
                | Q(paper__isnull=True, term__isnull=False),
                name="thread_of_paper_or_term",
            )
        ]

    def __str__(self) -> str:
        return f"Thread {self.pk} ({'paper' if self.paper_id else 'term'})"


class Comment(models.Model):
    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="comments")
    # Replies are one level deep: a reply's parent is always a top-level comment.
    parent = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="replies"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comments"
    )
    body = models.TextField()
    # The body rendered when it was written (discussion.markup): a page shows it as stored.
    body_html = models.TextField(editable=False)
    # The body folded for the duplicate check (discussion.spam.fingerprint).
    fingerprint = models.CharField(max_length=64, editable=False, db_index=True)
    # The form's one-time key: a form sent twice stores one comment.
    key = models.CharField(max_length=64, editable=False)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    edited_at = models.DateTimeField(null=True, blank=True, editable=False)
    deleted_at = models.DateTimeField(null=True, blank=True, editable=False)
    hidden_at = models.DateTimeField(null=True, blank=True)
    hidden_reason = models.CharField(max_length=200, blank=True)
    # Upvotes, kept by the votes' triggers.
    score = models.IntegerField(default=0, editable=False)
    # Drawn from kept_stamp_seq by a BEFORE trigger on any change of the row (a vote moves
    # ``score``): what the comment's kept HTML is keyed by (discussion.threads).
    stamp = models.BigIntegerField(default=0, editable=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["author", "key"], name="comment_once_per_key")
        ]
        indexes = [models.Index(fields=["thread", "parent", "score"], name="comment_thread_order")]

    def __str__(self) -> str:
        return f"Comment {self.pk} by {self.author_id}"

    @property
    def writer_name(self) -> str:
        return self.author.get_username()

    @property
    def is_visible(self) -> bool:
        return self.deleted_at is None and self.hidden_at is None


class Vote(models.Model):
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="votes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["comment", "user"], name="vote_once_per_reader")
        ]

    def __str__(self) -> str:
        return f"Vote by {self.user_id} for comment {self.comment_id}"


class Follow(models.Model):
    """A reader asked to be told of new comments in a thread (opt-in only)."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="follows")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "user"], name="follow_thread_once")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} follows thread {self.thread_id}"


class Report(models.Model):
    class Reason(models.TextChoices):
        SPAM = "spam", "Spam or advertising"
        ABUSE = "abuse", "Abusive or harassing"
        OFF_TOPIC = "off-topic", "Off topic"
        OTHER = "other", "Something else"

    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="reports")
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.CharField(max_length=16, choices=Reason.choices)
    details = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["comment", "reporter"], name="report_once_per_reader")
        ]

    def __str__(self) -> str:
        return f"Report of comment {self.comment_id}: {self.get_reason_display()}"


class Suspension(models.Model):
    """A writer a curator stopped from commenting (until ``until``, or for good)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comment_suspension"
    )
    reason = models.CharField(max_length=200)
    until = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Suspension of {self.user_id}"


class News(models.Model):
    """One thing a reader will be told about a thread (a reply to them, a comment where they
    follow), gathered into one batched market notice (``discussion.following``)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    comment = models.ForeignKey(Comment, on_delete=models.CASCADE, related_name="+")
    is_reply = models.BooleanField(default=False)
    notice = models.ForeignKey(
        "market.Notice", on_delete=models.CASCADE, related_name="+", null=True
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "comment"], name="news_once_per_comment")
        ]

    def __str__(self) -> str:
        return f"News of comment {self.comment_id} for {self.user_id}"
