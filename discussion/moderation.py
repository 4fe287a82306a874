"""The curators' acts: hide a comment with a reason (shown in its place), restore it, suspend
a writer. Each is one write the database's triggers turn into new stamps, so the comment is
gone from, or back on, every page that shows it at once."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .models import Comment, Report, Suspension
from .writing import keep_html_after_commit


def hide(*, comment_id: int, reason: str) -> None:
    with transaction.atomic():
        Comment.objects.filter(pk=comment_id).update(
            hidden_at=timezone.now(), hidden_reason=reason[:200]
        )
        keep_html_after_commit(comment_id)
        resolve(
            report_ids=list(
                Report.objects.filter(comment_id=comment_id).values_list("pk", flat=True)
            )
        )


def restore(*, comment_id: int) -> None:
    with transaction.atomic():
        Comment.objects.filter(pk=comment_id).update(hidden_at=None, hidden_reason="")
        keep_html_after_commit(comment_id)
        resolve(
            report_ids=list(
                Report.objects.filter(comment_id=comment_id).values_list("pk", flat=True)
            )
        )


def suspend(*, user_id: int, reason: str, until=None) -> None:
    Suspension.objects.update_or_create(
        user_id=user_id, defaults={"reason": reason[:200], "until": until}
    )


def resolve(*, report_ids: list[int]) -> None:
    Report.objects.filter(pk__in=report_ids, resolved_at__isnull=True).update(
        resolved_at=timezone.now()
    )
