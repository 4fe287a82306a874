"""Who may write what, and when: the limits that keep a discussion worth reading.

- A comment is at most ``MAX_CHARACTERS`` long and not empty.
- A writer a curator suspended writes nothing until the suspension ends.
- New accounts (younger than ``NEW_ACCOUNT_DAYS``) post no addresses and at most
  ``NEW_ACCOUNT_DAILY`` comments a day: a spammer's fresh account is worth little.
- The same text is refused: a writer's own within a day, anyone's past ``SAME_TEXT_LIMIT``.
- Edits within ``EDIT_WINDOW`` of posting.

Each refusal is a ``Refused`` with the sentence the writer reads; nothing was stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import unicodedata

from django.utils import timezone

from . import markup
from .models import Comment, Suspension

MAX_CHARACTERS = 10_000
EDIT_WINDOW = dt.timedelta(minutes=15)
NEW_ACCOUNT_DAYS = 3
NEW_ACCOUNT_DAILY = 3
SAME_TEXT_LIMIT = 3  # the same text from anyone, within a day
WRITES_PER_WINDOW = 30  # comments, edits, votes, reports and follows, per user and window

_INVISIBLE = re.compile(r"[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\s]+")


class Refused(Exception):
    """A write refused, with what to tell the writer."""


def fingerprint(body: str) -> str:
    """The body as a duplicate check sees it: case, spacing, zero-width and direction marks
    folded away, so that a spammer's variations of one text are one text."""
    folded = _INVISIBLE.sub(" ", unicodedata.normalize("NFKC", body).casefold()).strip()
    return hashlib.sha256(folded.encode()).hexdigest()


def clean_body(body: str) -> str:
    body = body.replace("\x00", "").strip()
    if not body:
        raise Refused("Write something first: the comment was empty.")
    if len(body) > MAX_CHARACTERS:
        raise Refused(
            f"A comment may be at most {MAX_CHARACTERS:,} characters; this one has"
            f" {len(body):,}. Nothing was posted."
        )
    return body


def suspension_of(user) -> Suspension | None:
    found = Suspension.objects.filter(user=user).first()
    if found is None or (found.until is not None and found.until <= timezone.now()):
        return None
    return found


def is_new(user, *, now: dt.datetime) -> bool:
    return user.date_joined > now - dt.timedelta(days=NEW_ACCOUNT_DAYS)


def check_writer(user) -> None:
    suspended = suspension_of(user)
    if suspended is not None:
        until = f" until {suspended.until:%-d %B %Y}" if suspended.until else ""
        raise Refused(f"A curator suspended you from commenting{until}: {suspended.reason}")


def check_new_comment(user, *, body: str, print_: str, now: dt.datetime) -> None:
    """Called with the writer's lock held (``threads.post``), so the counts are exact."""
    check_writer(user)
    day_ago = now - dt.timedelta(days=1)
    if is_new(user, now=now):
        if markup.has_links(body):
            raise Refused(
                f"Accounts younger than {NEW_ACCOUNT_DAYS} days cannot post links yet."
                " Nothing was posted."
            )
        today = Comment.objects.filter(author=user, created_at__gt=day_ago).count()
        if today >= NEW_ACCOUNT_DAILY:
            raise Refused(
                f"Accounts younger than {NEW_ACCOUNT_DAYS} days may post {NEW_ACCOUNT_DAILY}"
                " comments a day. Nothing was posted."
            )
    same = Comment.objects.filter(fingerprint=print_, created_at__gt=day_ago)
    if same.filter(author=user).exists():
        raise Refused("You posted this same text already today. Nothing was posted.")
    if same.count() >= SAME_TEXT_LIMIT:
        raise Refused("This same text has been posted too many times today. Nothing was posted.")


def may_edit(comment: Comment, *, now: dt.datetime) -> bool:
    return (
        comment.deleted_at is None
        and comment.hidden_at is None
        and (now - comment.created_at <= EDIT_WINDOW)
    )
