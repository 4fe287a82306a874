"""The market in the Django admin: curate terms, adjust balances, audit trades and the ledger.

Nothing here changes cash, holdings, supply or reserve itself: balance adjustments go through
``market.cash.adjust_balance``; trades, entries and dividends are read-only.
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path

from peerrevenue.forms import JSON_FORMFIELD_OVERRIDES

from . import cash
from .mined_phrases import candidate_terms, proposed_terms
from .models import (
    Account,
    DividendEvent,
    Entry,
    Holding,
    LedgerTransaction,
    Mention,
    NetWorthSnapshot,
    Term,
    TermProposal,
    TermQuerySet,
    Trade,
    WithheldDividend,
    slug_is_reserved,
)
from .proposals import open_proposals
from .refusals import TradeError
from .units import format_credits, parse_credits


class ReadOnlyAdmin(admin.ModelAdmin):
    """History is written by the market only; staff can look, not touch."""

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


def credits_column(field: str, description: str, *, ordering: str | None = None):
    @admin.display(description=description, ordering=ordering)
    def column(modeladmin, obj) -> str:
        return format_credits(getattr(obj, field), unit=False)

    return column


def intermediate_page(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    form: forms.Form,
    title: str,
    intro: str,
    action: str,
    submit: str,
) -> TemplateResponse:
    """The confirmation page an action shows before it applies, carrying the selection."""
    return TemplateResponse(
        request,
        "admin/market/action_form.html",
        {
            **modeladmin.admin_site.each_context(request),
            "title": title,
            "intro": intro,
            "form": form,
            "objects": list(queryset),
            "action": action,
            "submit": submit,
            "selected": request.POST.getlist(ACTION_CHECKBOX_NAME),
            "action_checkbox_name": ACTION_CHECKBOX_NAME,
            "opts": modeladmin.model._meta,
            "media": modeladmin.media + form.media,
        },
    )


# Terms ------------------------------------------------------------------------------------


class ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Shown to traders who try to trade the term.",
    )


class TermAdminForm(forms.ModelForm):
    class Meta:
        model = Term
        fields = ["phrase", "slug", "aliases", "description", "status", "status_reason", "p0", "k"]
        help_texts = {
            # The admin shows help text as HTML, so no angle brackets here.
            "slug": "The term's address: “kv-cache” is /market/kv-cache/. Leave blank to make "
            "one from the phrase; it cannot be changed once the term is saved."
        }

    def clean_slug(self) -> str:
        slug = self.cleaned_data["slug"]
        # Term.save() would quietly pick another slug; someone who typed one should know why.
        if slug and slug_is_reserved(slug):
            raise forms.ValidationError(
                f"“{slug}” cannot be a term's slug: /market/{slug}/ is a fixed page of the "
                "site. Choose another, or leave it blank to make one from the phrase."
            )
        return slug


@admin.register(Term)
class TermAdmin(admin.ModelAdmin):
    form = TermAdminForm
    formfield_overrides = JSON_FORMFIELD_OVERRIDES
    list_display = [
        "phrase",
        "status",
        "supply",
        "price_column",
        "reserve_column",
        "version",
        "updated_at",
    ]
    list_filter = ["status"]
    search_fields = ["phrase", "slug", "aliases"]
    readonly_fields = [
        "slug",
        "supply",
        "reserve_column",
        "price_column",
        "version",
        "created_at",
        "updated_at",
    ]
    fields = [
        "phrase",
        "slug",
        "aliases",
        "description",
        "status",
        "status_reason",
        "p0",
        "k",
        "price_column",
        "supply",
        "reserve_column",
        "version",
        "created_at",
        "updated_at",
    ]
    actions = ["halt", "delist", "relist"]
    change_list_template = "admin/market/term/change_list.html"

    def get_urls(self):
        return [
            path(
                "candidates/",
                self.admin_site.admin_view(self.candidates_view),
                name="market_term_candidates",
            ),
            *super().get_urls(),
        ]

    def candidates_view(self, request: HttpRequest) -> HttpResponse:
        """Frequent unlisted phrases of the last week, and a button to list the chosen ones."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST":
            chosen = {p.strip() for p in request.POST.getlist("phrase") if p.strip()}
            offered = {candidate.phrase for candidate in candidate_terms(limit=200)}
            offered |= set(open_proposals().values_list("phrase", flat=True))
            # One term per phrase whatever its case ("RDMA" proposed, "rdma" found): the
            # phrase is unique, and a second create would fail.
            to_list = sorted({p.lower(): p for p in sorted(chosen & offered)}.values())
            if not to_list:
                self.message_user(request, "Choose at least one phrase to list.", messages.ERROR)
                return redirect("admin:market_term_candidates")
            with transaction.atomic():
                for phrase in to_list:
                    Term.objects.create(phrase=phrase)
            self.message_user(
                request, f"Listed {len(to_list)} term(s): {', '.join(to_list)}.", messages.SUCCESS
            )
            return redirect("admin:market_term_changelist")
        context = {
            **self.admin_site.each_context(request),
            "title": "Candidate terms",
            "opts": self.model._meta,
            "candidates": candidate_terms(),
            "proposed": proposed_terms(),
        }
        return TemplateResponse(request, "admin/market/term/candidates.html", context)

    # The price is p0 + k·supply; ordering by supply is the useful approximation in lists.
    price_column = credits_column("price", "price (credits)", ordering="supply")
    reserve_column = credits_column("reserve", "reserve (credits)", ordering="reserve")

    def get_readonly_fields(self, request: HttpRequest, obj: Term | None = None) -> list[str]:
        fields = list(super().get_readonly_fields(request, obj))
        if obj is None:
            # A slug may be typed when listing a term; afterwards it is the term's address,
            # and changing it would break every link to the term.
            fields.remove("slug")
        if obj is not None and obj.supply:
            # The curve must keep pricing the shares already out against the reserve.
            fields += ["p0", "k"]
        return fields

    def _set_status(
        self, request, queryset, *, name: str, verb: str, apply
    ) -> TemplateResponse | None:
        form = ReasonForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            count = apply(queryset, form.cleaned_data["reason"])
            self.message_user(request, f"{verb.capitalize()} {count} term(s).", messages.SUCCESS)
            return None
        return intermediate_page(
            self,
            request,
            queryset,
            form=form,
            title=f"{verb.capitalize()} terms",
            intro=f"These terms will be {verb}:",
            action=name,
            submit=verb.capitalize(),
        )

    @admin.action(description="Halt trading in the selected terms…")
    def halt(self, request: HttpRequest, queryset: QuerySet[Term]):
        return self._set_status(
            request,
            queryset,
            name="halt",
            verb="halted",
            apply=lambda qs, reason: qs.halt(reason=reason),
        )

    @admin.action(description="Delist the selected terms…")
    def delist(self, request: HttpRequest, queryset: QuerySet[Term]):
        return self._set_status(
            request,
            queryset,
            name="delist",
            verb="delisted",
            apply=lambda qs, reason: qs.delist(reason=reason),
        )

    @admin.action(description="Relist the selected terms (trading resumes)")
    def relist(self, request: HttpRequest, queryset: TermQuerySet) -> None:
        count = queryset.relist()
        self.message_user(request, f"Relisted {count} term(s).", messages.SUCCESS)


# Accounts ---------------------------------------------------------------------------------


class AdjustBalanceForm(forms.Form):
    amount = forms.CharField(
        label="Amount (credits)",
        help_text="Positive adds to each selected balance, negative removes; up to six decimals.",
    )
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "cols": 60}),
        help_text="Recorded in the ledger with your name.",
    )

    def clean_amount(self) -> int:
        try:
            amount = parse_credits(self.cleaned_data["amount"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if amount == 0:
            raise forms.ValidationError("Enter a non-zero amount.")
        try:
            return cash.check_adjustment(amount)
        except TradeError as exc:
            raise forms.ValidationError(str(exc)) from None


class HoldingInline(ReadOnlyInline):
    model = Holding
    fields = ["term", "shares"]


@admin.register(Account)
class AccountAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "kind", "user", "cash_column", "shard", "created_at"]
    list_filter = ["kind"]
    search_fields = ["user__username", "user__email"]
    list_select_related = ["user"]
    # A tuple: one value for both, and the two attributes' declared types differ.
    fields = readonly_fields = ("kind", "user", "cash_column", "shard", "created_at")
    inlines = [HoldingInline]
    actions = ["adjust_balance"]

    cash_column = credits_column("cash", "cash (credits)", ordering="cash")

    def has_adjust_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("market.change_account")

    @admin.action(
        description="Adjust balance of the selected user accounts…", permissions=["adjust"]
    )
    def adjust_balance(self, request: HttpRequest, queryset: QuerySet[Account]):
        queryset = queryset.select_related("user")
        form = AdjustBalanceForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            amount, reason = form.cleaned_data["amount"], form.cleaned_data["reason"]
            for account in queryset:
                try:
                    cash.adjust_balance(
                        account=account, amount=amount, reason=reason, by=request.user
                    )
                except TradeError as exc:
                    self.message_user(request, f"{account}: {exc}", messages.ERROR)
                else:
                    self.message_user(
                        request,
                        f"{account}: adjusted by {format_credits(amount)}.",
                        messages.SUCCESS,
                    )
            return None
        return intermediate_page(
            self,
            request,
            queryset,
            form=form,
            title="Adjust balances",
            intro="Each of these accounts will be adjusted by the amount, from or to the "
            "issuance account:",
            action="adjust_balance",
            submit="Adjust",
        )


# History ----------------------------------------------------------------------------------


@admin.register(Trade)
class TradeAdmin(ReadOnlyAdmin):
    list_display = [
        "id",
        "created_at",
        "account",
        "term",
        "side",
        "shares",
        "amount_column",
        "fee_column",
        "supply_before",
        "supply_after",
        "price_after_column",
        "term_version",
    ]
    list_filter = ["side", "term"]
    search_fields = ["key", "account__user__username", "term__phrase"]
    list_select_related = ["account__user", "term"]
    amount_column = credits_column("amount", "amount (credits)", ordering="amount")
    fee_column = credits_column("fee", "fee (credits)", ordering="fee")
    price_after_column = credits_column(
        "price_after", "price after (credits)", ordering="price_after"
    )
    date_hierarchy = "created_at"


class EntryInline(ReadOnlyInline):
    model = Entry
    fields = ["account", "term", "asset", "amount"]


@admin.register(LedgerTransaction)
class LedgerTransactionAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "memo", "created_by", "created_at"]
    list_filter = ["kind"]
    search_fields = ["memo"]
    list_select_related = ["created_by"]
    inlines = [EntryInline]
    date_hierarchy = "created_at"


@admin.register(Entry)
class EntryAdmin(ReadOnlyAdmin):
    list_display = ["id", "transaction", "account", "term", "asset", "amount"]
    list_filter = ["asset"]
    list_select_related = ["account__user", "term", "transaction"]


@admin.register(Holding)
class HoldingAdmin(ReadOnlyAdmin):
    list_display = ["account", "term", "shares"]
    list_select_related = ["account__user", "term"]
    search_fields = ["account__user__username", "term__phrase"]


@admin.register(Mention)
class MentionAdmin(ReadOnlyAdmin):
    list_display = ["term", "paper", "date"]
    list_filter = ["date"]
    search_fields = ["term__phrase", "paper__arxiv_id"]
    list_select_related = ["term", "paper"]


@admin.register(DividendEvent)
class DividendEventAdmin(ReadOnlyAdmin):
    list_display = [
        "term",
        "paper",
        "date",
        "announced_at",
        "window_opens_at",
        "window_source",
        "per_share_column",
        "shares",
        "transaction",
    ]
    list_filter = ["date", "window_source"]
    per_share_column = credits_column("per_share", "per share (credits)", ordering="per_share")
    search_fields = ["term__phrase", "paper__arxiv_id"]
    list_select_related = ["term", "paper"]


@admin.register(WithheldDividend)
class WithheldDividendAdmin(ReadOnlyAdmin):
    """Dividends a verified author's shares did not earn from their own papers."""

    list_display = ["event", "account", "claim", "shares", "created_at"]
    search_fields = ["event__term__phrase", "event__paper__arxiv_id", "account__user__username"]
    list_select_related = ["event__term", "account__user", "claim"]


@admin.register(TermProposal)
class TermProposalAdmin(admin.ModelAdmin):
    """Traders' proposals; curators list them from the candidate page."""

    list_display = ["phrase", "user", "created_at", "term", "listed_at"]
    list_filter = ["listed_at"]
    search_fields = ["phrase", "reason", "user__username"]
    readonly_fields = ("user", "phrase", "reason", "created_at", "term", "listed_at")
    fields = (*readonly_fields, "notice_shown_at")

    def has_add_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(NetWorthSnapshot)
class NetWorthSnapshotAdmin(ReadOnlyAdmin):
    list_display = ["date", "account", "net_worth", "granted"]
    list_filter = ["date"]
    search_fields = ["account__user__username"]
