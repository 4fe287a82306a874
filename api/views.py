"""The API's two pages for people: the reference (read from the OpenAPI document the API
serves) and the reader's tokens, under their settings."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from .models import Scope
from .reference import operations
from .site import api
from .tokens import TokenError, make_token, revoke_token, tokens_of


@require_GET
def reference(request: HttpRequest) -> HttpResponse:
    document = api.get_openapi_schema(path_prefix="/api/v1")
    context = {
        "title": document["info"]["title"],
        "description": document["info"].get("description", ""),
        "operations": operations(document),
        "nav": "api",
    }
    return render(request, "api/reference.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    made = None
    status = 200
    if request.method == "POST":
        try:
            if request.POST.get("action") == "revoke":
                token_id = request.POST.get("token", "")
                if not token_id.isascii() or not token_id.isdigit() or len(token_id) > 18:
                    raise TokenError("You have no such token; perhaps it was revoked already.")
                revoked = revoke_token(user=request.user, token_id=int(token_id))
                messages.success(request, f"Revoked “{revoked.name}”: it works nowhere now.")
                return redirect("api_tokens")
            made = make_token(
                user=request.user,
                name=request.POST.get("name", ""),
                scopes=request.POST.getlist("scopes"),
            )
        except TokenError as exc:
            messages.error(request, str(exc))
            status = 400
    response = render(
        request,
        "api/tokens.html",
        {
            "tokens": tokens_of(user=request.user),
            "scopes": Scope.choices,
            "made": made,
            "nav": "settings",
        },
        status=status,
    )
    # The page may hold a secret shown once: no cache, no back-button copy keeps it.
    response["Cache-Control"] = "no-store"
    return response
