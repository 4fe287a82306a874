"""Errors as ``application/problem+json`` (RFC 9457), worded as the web words them.

Every refusal the API gives is a ``Problem``: the status, a short title, and the ``detail``
a person can act on: the same sentence the web shows for the same refusal, since both come
from the same domain function's exception. ``install`` teaches a NinjaAPI to answer every
error this way, so no endpoint builds an error response of its own.
"""

from __future__ import annotations

import json
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from library.saves import LibraryError
from market.refusals import TradeError
from papers.search.parse import SearchError
from peerrevenue import errors

CONTENT_TYPE = "application/problem+json"
TITLES = {
    400: "Bad request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not found",
    405: "Method not allowed",
    409: "Refused",
    422: "Unprocessable content",
    429: "Too many requests",
    503: "Service unavailable",
}


class Problem(Exception):
    def __init__(self, status: int, detail: str, *, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}


def response(
    request: HttpRequest, status: int, detail: str, *, headers: dict[str, str] | None = None
) -> HttpResponse:
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "instance": request.path,
    }
    answer = HttpResponse(
        json.dumps(body, ensure_ascii=False), status=status, content_type=CONTENT_TYPE
    )
    answer["Cache-Control"] = "no-store"
    for name, value in (headers or {}).items():
        answer[name] = value
    return answer


def _words(error: dict[str, Any]) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query"))
    message = str(error.get("msg", "is not valid"))
    return f"{where}: {message}" if where else message


def install(api: NinjaAPI) -> None:
    """Every error of ``api`` as a problem."""

    @api.exception_handler(Problem)
    def problem(request: HttpRequest, exc: Problem) -> HttpResponse:
        return response(request, exc.status, exc.detail, headers=exc.headers)

    @api.exception_handler(ValidationError)
    def invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        detail = "; ".join(_words(error) for error in exc.errors[:5]) or "The request is invalid."
        return response(request, 400, f"Nothing was done: {detail}.")

    @api.exception_handler(AuthenticationError)
    def unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        return response(
            request,
            401,
            "Send a personal token (Authorization: Bearer …); make one in your settings.",
            headers={"WWW-Authenticate": 'Bearer realm="api"'},
        )

    @api.exception_handler(HttpError)
    def http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        return response(request, exc.status_code, str(exc))

    @api.exception_handler(Http404)
    def not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return response(request, 404, str(exc) or "There is nothing here.")

    @api.exception_handler(TradeError)
    def refused(request: HttpRequest, exc: TradeError) -> HttpResponse:
        return response(request, 409, str(exc))

    @api.exception_handler(LibraryError)
    def library_refused(request: HttpRequest, exc: LibraryError) -> HttpResponse:
        return response(request, 400, str(exc))

    @api.exception_handler(SearchError)
    def search_refused(request: HttpRequest, exc: SearchError) -> HttpResponse:
        return response(request, 400, str(exc))

    for unavailable in errors.DATABASE_UNAVAILABLE:

        @api.exception_handler(unavailable)
        def outage(request: HttpRequest, exc: Exception) -> HttpResponse:
            answer = response(
                request,
                503,
                "The market's database is briefly unavailable; nothing was traded or saved. "
                "Try again in a moment.",
                headers={"Retry-After": str(errors.RETRY_AFTER_SECONDS)},
            )
            answer.database_outage = True  # type: ignore[attr-defined]
            return answer
