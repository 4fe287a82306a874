"""Claims in the Django admin: the curator's queue, filtered by status and evidence, and two
actions, approve and refuse (with the reason the reader reads). Claims are kept for the record:
nobody deletes one here."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html

from . import claims
from .models import Claim


class ClaimActionForm(ActionForm):
    reason = forms.CharField(
        required=False,
        max_length=2000,
        label="Reason (for refusals; the reader sees it)",
        widget=forms.TextInput(attrs={"size": 60}),
    )


class EmailConfirmedFilter(admin.SimpleListFilter):
    title = "institutional address"
    parameter_name = "email"

    def lookups(self, request, model_admin):
        return [
            ("confirmed", "Confirmed"),
            ("unconfirmed", "Given, not confirmed"),
            ("none", "None"),
        ]

    def queryset(self, request, queryset):
        if self.value() == "confirmed":
            return queryset.exclude(email_confirmed_at=None)
        if self.value() == "unconfirmed":
            return queryset.exclude(institution_email="").filter(email_confirmed_at=None)
        if self.value() == "none":
            return queryset.filter(institution_email="")
        return queryset


@admin.register(Claim)
class ClaimAdmin(admin.ModelAdmin):
    list_display = [
        "paper",
        "user",
        "status",
        "orcid_record",
        "institution_email",
        "email_confirmed",
        "created_at",
        "decided_at",
    ]
    list_filter = ["status", EmailConfirmedFilter, "created_at"]
    search_fields = [
        "paper__arxiv_id",
        "user__username",
        "user__email",
        "orcid",
        "institution_email",
    ]
    list_select_related = ["paper", "user"]
    raw_id_fields = ["user", "paper", "decided_by"]
    readonly_fields = ["created_at", "decided_at", "decided_by", "email_confirmed_at"]
    fields = [
        "user",
        "paper",
        "status",
        "reason",
        "orcid",
        "institution_email",
        "email_confirmed_at",
        "note",
        "created_at",
        "decided_at",
        "decided_by",
    ]
    action_form = ClaimActionForm
    actions = ["approve", "refuse"]

    @admin.display(description="ORCID iD")
    def orcid_record(self, claim: Claim) -> str:
        if not claim.orcid:
            return "—"
        return format_html('<a href="https://orcid.org/{0}" rel="noopener">{0}</a>', claim.orcid)

    @admin.display(boolean=True, description="address confirmed")
    def email_confirmed(self, claim: Claim) -> bool | None:
        return None if not claim.institution_email else claim.email_confirmed_at is not None

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False  # refused and withdrawn claims stay for the record

    def get_actions(self, request: HttpRequest):
        found = super().get_actions(request)
        found.pop("delete_selected", None)
        return found

    def save_model(self, request: HttpRequest, obj: Claim, form, change: bool) -> None:
        # A decision made by editing the status is dated and signed like one by an action.
        if "status" in form.changed_data and obj.status != Claim.Status.PENDING:
            obj.decided_at = timezone.now()
            obj.decided_by = request.user  # type: ignore[assignment]  # the admin's: signed in
        super().save_model(request, obj, form, change)

    @admin.action(description="Approve the selected pending claims")
    def approve(self, request: HttpRequest, queryset: QuerySet[Claim]) -> None:
        count = claims.approve(claims=queryset, curator=request.user)
        self.message_user(request, f"Approved {count} claim{'s' if count != 1 else ''}.")

    @admin.action(description="Refuse the selected claims, with the reason given")
    def refuse(self, request: HttpRequest, queryset: QuerySet[Claim]) -> None:
        try:
            count = claims.refuse(
                claims=queryset, curator=request.user, reason=request.POST.get("reason", "")
            )
        except claims.ClaimError as exc:
            self.message_user(request, f"Nothing was refused. {exc}", level=messages.ERROR)
            return
        self.message_user(request, f"Refused {count} claim{'s' if count != 1 else ''}.")
