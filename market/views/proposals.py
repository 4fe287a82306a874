"""The page where a signed-in trader proposes a term and sees what became of their proposals."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from peerrevenue.ratelimit import is_limited, seconds_until_reset, wait_text

from .. import proposals

TOO_MANY = (
    "You have proposed {limit} terms in the last day, the most we take from one trader. "
    "Nothing was saved; you can propose again in {wait}."
)
DAY_SECONDS = 86_400


class ProposalForm(forms.Form):
    phrase = forms.CharField(
        label="Term",
        max_length=100,
        help_text="A word or short phrase as papers write it, e.g. “speculative decoding”.",
    )
    reason = forms.CharField(
        label="Why it would trade",
        min_length=10,
        max_length=1000,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="What the phrase names and why papers will use it more (or less). Curators "
        "read this.",
    )

    def clean_phrase(self) -> str:
        try:
            return proposals.check_phrase(self.cleaned_data["phrase"])
        except proposals.ProposalRefused as exc:
            raise forms.ValidationError(str(exc)) from None


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def propose(request: HttpRequest) -> HttpResponse:
    form = ProposalForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        limit = settings.RATELIMIT_PROPOSALS_PER_DAY
        if is_limited("propose", str(request.user.pk), limit=limit, window_seconds=DAY_SECONDS):
            wait = wait_text(seconds_until_reset(window_seconds=DAY_SECONDS))
            form.add_error(None, TOO_MANY.format(limit=limit, wait=wait))
            status = 429
        elif form.is_valid():
            try:
                proposal = proposals.propose(user=request.user, **form.cleaned_data)
            except proposals.ProposalRefused as exc:  # proposed by someone else meanwhile
                form.add_error("phrase", str(exc))
            else:
                messages.success(
                    request,
                    f"Thank you: “{proposal.phrase}” is proposed. If a curator lists it, we "
                    "will tell you here and by e-mail.",
                )
                return redirect("market:propose")
        status = status if status != 200 else 400
    context = {
        "form": form,
        "mine": proposals.proposals_of(request.user)[:20],
        "nav": "market",
    }
    return render(request, "market/propose.html", context, status=status)
