"""The curators' side: the report queue (hide with a reason, restore, suspend the writer),
comments and suspensions."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from . import moderation
from .models import Comment, Report, Suspension


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("comment", "comment_text", "reason", "details", "reporter", "created_at")
    list_filter = (("resolved_at", admin.EmptyFieldListFilter), "reason")
    list_select_related = ("comment", "reporter")
    readonly_fields = ("comment", "reporter", "reason", "details", "created_at")
    actions = ("hide_comments", "restore_comments", "suspend_writers", "dismiss")
    ordering = ("resolved_at", "-created_at")

    @admin.display(description="Comment")
    def comment_text(self, report: Report) -> str:
        return report.comment.body[:200] or "(deleted)"

    @admin.action(description="Hide the reported comments (the report's reason shown in place)")
    def hide_comments(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        for report in queryset:
            moderation.hide(comment_id=report.comment_id, reason=report.get_reason_display())
        messages.success(request, f"{queryset.count()} reported comment(s) hidden.")

    @admin.action(description="Restore the reported comments")
    def restore_comments(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        for report in queryset:
            moderation.restore(comment_id=report.comment_id)
        messages.success(request, "Restored.")

    @admin.action(description="Suspend the comments' writers from commenting")
    def suspend_writers(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        for report in queryset.select_related("comment"):
            moderation.suspend(
                user_id=report.comment.author_id,
                reason=f"reported for {report.get_reason_display().lower()}",
            )
        messages.success(request, "Writers suspended.")

    @admin.action(description="Dismiss the reports (nothing wrong)")
    def dismiss(self, request: HttpRequest, queryset: QuerySet[Report]) -> None:
        moderation.resolve(report_ids=list(queryset.values_list("pk", flat=True)))


@admin.register(Comment)
class CommentAdmin(admin.ModelAdmin):
    list_display = ("pk", "author", "thread", "created_at", "score", "hidden_at", "deleted_at")
    list_filter = (("hidden_at", admin.EmptyFieldListFilter),)
    search_fields = ("body", "author__username")
    fields = ("author", "thread", "body", "hidden_reason", "hidden_at")
    readonly_fields = ("author", "thread", "body")
    actions = ("hide", "restore")

    @admin.action(description="Hide (reason: against the site's rules)")
    def hide(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        for comment in queryset:
            moderation.hide(comment_id=comment.pk, reason="against the site's rules")

    @admin.action(description="Restore")
    def restore(self, request: HttpRequest, queryset: QuerySet[Comment]) -> None:
        for comment in queryset:
            moderation.restore(comment_id=comment.pk)


@admin.register(Suspension)
class SuspensionAdmin(admin.ModelAdmin):
    list_display = ("user", "reason", "until", "created_at")
    raw_id_fields = ("user",)
