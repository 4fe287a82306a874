"""/claims/: a reader claims papers as theirs (one from its page, several from an author's
name), follows the curator's decisions, withdraws, and confirms an institutional address by
the mailed link. The rules are authorship.claims'; the limits accounts.limits' (they hold
while Redis is down, as each request may send a mail)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.views.decorators.http import require_POST

from authorship import claims
from authorship.forms import ClaimForm
from papers.views import MAX_AUTHOR_NAME

from . import limits


def _too_many(request: HttpRequest) -> HttpResponse:
    response = render(
        request,
        "429.html",
        {"message": limits.too_many_claims(), "back": reverse("claims")},
        status=429,
    )
    return response


@login_required
def claims_page(request: HttpRequest) -> HttpResponse:
    return render(
        request, "authorship/claims.html", {"claims": claims.claims_of(user=request.user)}
    )


@login_required
def new_claim(request: HttpRequest) -> HttpResponse:
    """GET ?paper=ID (one paper, ticked) or ?author=NAME (that name's papers, none ticked);
    POST the ticked papers with the evidence."""
    source = request.POST if request.method == "POST" else request.GET
    author = " ".join(source.get("author", "").split())[:MAX_AUTHOR_NAME]
    ticked = [value for value in source.getlist("paper") if value][
        : claims.MAX_PAPERS_PER_REQUEST + 1
    ]
    if author:
        offered = claims.papers_by_author(name=author)
    else:
        # The papers the form offered, ticked or not: a reader who unticks the only one is
        # shown the form again with the message, not an empty page.
        offers = source.getlist("offer")[: claims.MAX_PAPERS_PER_REQUEST + 1] or ticked
        offered = claims.papers_to_claim(arxiv_ids=offers)
    form = ClaimForm(request.POST if request.method == "POST" else None)
    problem = ""
    if request.method == "POST":
        if limits.claims_limited(request):
            return _too_many(request)
        if form.is_valid():
            chosen = [paper for paper in claims.papers_to_claim(arxiv_ids=ticked)]
            problem = _submit(request, form=form, papers=chosen)
            if not problem:
                return redirect("claims")
    elif not author:
        ticked = [paper.arxiv_id for paper in offered]
    context = {
        "form": form,
        "offered": offered,
        "ticked": set(ticked),
        "author": author,
        "problem": problem,
    }
    return render(request, "authorship/new_claim.html", context, status=400 if problem else 200)


def _submit(request: HttpRequest, *, form: ClaimForm, papers) -> str:
    """Make the claims and mail the link; the problem to show, or "" when done."""
    data = form.cleaned_data
    email = data["institution_email"]
    if email and limits.claim_mail_limited_for_email(email):
        return (
            "Too many confirmation mails went to this address in the last few minutes. "
            "Nothing was claimed; try again shortly."
        )
    try:
        done = claims.submit(
            user=request.user,
            papers=papers,
            orcid=data["orcid"],
            institution_email=email,
            note=data["note"],
        )
    except claims.ClaimError as exc:
        return str(exc)
    if done.made:
        count = len(done.made)
        messages.success(
            request,
            f"Claimed {count} paper{pluralize(count)}: a curator will review "
            f"{pluralize(count, 'it,them')}.",
        )
    if done.already:
        messages.info(
            request,
            "You already claim "
            + ", ".join(f"arXiv:{paper.arxiv_id}" for paper in done.already)
            + ": those were left as they are.",
        )
    if email and done.made:
        token = claims.confirmation_token(claims=done.made)
        link = request.build_absolute_uri(reverse("claim_confirm", args=[token]))
        claims.mail_confirmation(claims=done.made, link=link)
        messages.info(request, f"We mailed a link to {email}: open it to confirm the address.")
    return ""


@login_required
@require_POST
def withdraw_claim(request: HttpRequest) -> HttpResponse:
    if limits.claims_limited(request):
        return _too_many(request)
    raw = request.POST.get("claim", "")
    try:
        claim = claims.withdraw(user=request.user, claim_id=int(raw) if raw.isdigit() else 0)
    except claims.ClaimError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Your claim of arXiv:{claim.paper.arxiv_id} is withdrawn.")
    return redirect("claims")


def confirm_claim_email(request: HttpRequest, token: str) -> HttpResponse:
    """The mailed link: GET shows what it confirms and a button (a mail scanner that fetches
    links confirms nothing); POST confirms."""
    try:
        found, email = claims.claims_of_token(token)
    except claims.ClaimError as exc:
        return render(request, "authorship/confirm.html", {"problem": str(exc)}, status=400)
    if request.method == "POST":
        claims.confirm_email(token=token)
        return render(request, "authorship/confirm.html", {"done": True, "email": email})
    return render(
        request, "authorship/confirm.html", {"claims": found, "email": email, "token": token}
    )
