from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from peerrevenue.forms import JSON_FORMFIELD_OVERRIDES
from peerrevenue.pagecache import invalidate_pages

from .models import Category, IngestRun, Listing, Paper, PaperVersion


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["code", "name", "archive_name", "ingest_enabled"]
    list_editable = ["ingest_enabled"]
    list_filter = ["ingest_enabled", "archive_name"]
    search_fields = ["code", "name"]


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
    readonly_fields = [
        "title_html",
        "abstract_html",
        "typesetter_version",
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
        invalidate_pages()
        self.message_user(request, f"Hid {count} paper(s).", messages.SUCCESS)

    @admin.action(description="Show selected papers again")
    def unhide(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = Paper.objects.filter(pk__in=queryset.values("pk")).update(hidden=False)
        invalidate_pages()
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
