from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, TypedDict

from django.contrib import admin, messages
from django.db.models import Max, QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from peerrevenue.forms import JSON_FORMFIELD_OVERRIDES

from . import backfills
from .models import Category, IngestRun, Listing, Paper, PaperVersion

if TYPE_CHECKING:
    from django_stubs_ext import WithAnnotations


class LastRun(TypedDict):
    last_run_at: dt.datetime | None  # CategoryAdmin.get_queryset's annotation


RECENT_RUNS = 15


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "archive_name", "ingest_enabled", "last_run"]
    list_editable = ["ingest_enabled"]
    list_filter = ["ingest_enabled", "archive_name"]
    search_fields = ["code", "name"]
    readonly_fields = ["recent_runs"]
    actions = ["enable_and_backfill", "disable_ingest"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).annotate(last_run_at=Max("ingest_runs__started_at"))

    @admin.display(description="Last ingest", ordering="last_run_at")
    def last_run(self, category: WithAnnotations[Category, LastRun]) -> dt.datetime | str:
        return category.last_run_at or "never"

    @admin.display(description="Recent ingest runs")
    def recent_runs(self, category: Category) -> str:
        """The category's latest runs, a running backfill's progress first among them."""
        runs = category.ingest_runs.all()[:RECENT_RUNS] if category.pk else []
        if not runs:
            return "None yet."
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    run.started_at.strftime("%Y-%m-%d %H:%M"),
                    run.get_status_display(),
                    run.date or "",
                    run.source,
                    f"{run.papers_created} new, {run.listings_created} listings",
                    run.error[:200],
                )
                for run in runs
            ),
        )
        return format_html(
            '<table class="recent-runs"><thead><tr><th>Started</th><th>Status</th><th>Day</th>'
            "<th>Source or progress</th><th>Stored</th><th>Error</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            rows,
        )

    @admin.action(description="Enable daily ingest and backfill the last two weeks")
    def enable_and_backfill(self, request: HttpRequest, queryset: QuerySet) -> None:
        categories = list(queryset)
        backfills.enable_and_backfill(categories=categories)
        codes = ", ".join(category.code for category in categories)
        self.message_user(
            request,
            f"Enabled {codes} and sent a backfill of the last {backfills.BACKFILL_DAYS} days to "
            "the worker; its progress (or why it could not start) shows under “Recent ingest "
            "runs” on each category's page.",
            messages.SUCCESS,
        )

    @admin.action(description="Disable daily ingest (keeps the papers)")
    def disable_ingest(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = queryset.update(ingest_enabled=False)
        self.message_user(request, f"Disabled the daily ingest of {count} categories.")


class ListingInline(admin.TabularInline):
    model = Listing
    extra = 0
    fields = ["category", "date", "announce_type", "version"]
    autocomplete_fields = ["category"]


class PaperVersionInline(admin.TabularInline):
    model = PaperVersion
    extra = 0
    fields = ["number", "title", "seen_at"]
    readonly_fields = ["number", "title", "seen_at"]
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(Paper)
class PaperAdmin(admin.ModelAdmin):
    list_display = [
        "arxiv_id",
        "version",
        "short_title",
        "primary_category",
        "hidden",
        "updated_at",
    ]
    list_filter = [
        "hidden",
        "listings__category",
        "listings__date",
        "listings__announce_type",
    ]
    search_fields = ["arxiv_id", "title", "authors_text"]
    # Rendered from the TeX whenever it is saved (Paper.save): shown, never edited.
    readonly_fields = [
        "title_html",
        "abstract_html",
        "authors_text",
        "typesetter_version",
        "version_dates",
        "created_at",
        "modified_at",
    ]
    inlines = [ListingInline, PaperVersionInline]
    actions = ["hide", "unhide"]
    date_hierarchy = "submitted_at"
    formfield_overrides = JSON_FORMFIELD_OVERRIDES

    @admin.display(description="Title")
    def short_title(self, paper: Paper) -> str:
        return paper.title if len(paper.title) <= 90 else paper.title[:87] + "…"

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        # The list filters join listings; distinct keeps one row per paper.
        return super().get_queryset(request).distinct()

    @admin.action(description="Hide selected papers from every page")
    def hide(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = Paper.objects.filter(pk__in=queryset.values("pk")).update(hidden=True)
        self.message_user(request, f"Hid {count} paper(s).", messages.SUCCESS)

    @admin.action(description="Show selected papers again")
    def unhide(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = Paper.objects.filter(pk__in=queryset.values("pk")).update(hidden=False)
        self.message_user(request, f"Showed {count} paper(s) again.", messages.SUCCESS)


@admin.register(IngestRun)
class IngestRunAdmin(admin.ModelAdmin):
    list_display = [
        "started_at",
        "category",
        "date",
        "status",
        "items",
        "papers_created",
        "papers_updated",
        "listings_created",
        "short_error",
    ]
    list_filter = ["status", "category"]
    ordering = ["-started_at"]

    @admin.display(description="Error")
    def short_error(self, run: IngestRun) -> str:
        return run.error[:120]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
