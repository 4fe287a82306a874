"""What every API answer carries whatever endpoint made it: the rate limit (counted before
the endpoint runs, refused with a problem past it) and CORS, open to anonymous reads only.

CORS: any origin may read what needs no token; a browser is never told it may send a token
(no ``Authorization`` among the allowed headers, no credentials), so a page elsewhere cannot
make a reader's browser act with their token.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from peerrevenue.ratelimit import wait_text

from . import problems
from .limits import count_request

PREFIX = "/api/"
READS = ("GET", "HEAD")


def _cors(request: HttpRequest, response: HttpResponse) -> None:
    if request.method in READS and "Authorization" not in request.headers:
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Expose-Headers"] = (
            "ETag, Last-Modified, RateLimit, RateLimit-Policy, Retry-After"
        )


def _preflight(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(status=204)
    asked = request.headers.get("Access-Control-Request-Method", "")
    asked_headers = request.headers.get("Access-Control-Request-Headers", "").lower()
    if asked in READS and "authorization" not in asked_headers:
        response["Access-Control-Allow-Origin"] = "*"
        response["Access-Control-Allow-Methods"] = "GET, HEAD"
        response["Access-Control-Allow-Headers"] = "If-None-Match, If-Modified-Since"
        response["Access-Control-Max-Age"] = "3600"
    return response


# What answers an API path before or around its endpoints (a NUL in the URL refused, a path
# that is no endpoint, a method an endpoint does not take, a server error, the outage pages),
# in words for people, said again as a problem for programs.
GENERIC = {
    404: "There is no such endpoint; the reference is at /api/v1/reference/.",
    405: "That endpoint does not take this method; the reference lists those it takes.",
    500: "Something went wrong on our side; nothing was changed. Try again later.",
    503: "The site is briefly unavailable; nothing was traded or saved. Try again in a moment.",
}


def as_problem(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    if response.status_code < 400 or response.get("Content-Type", "").startswith(
        problems.CONTENT_TYPE
    ):
        return response
    detail = GENERIC.get(response.status_code, "")
    if not detail and response.get("Content-Type", "").startswith("text/plain"):
        detail = response.content.decode(response.charset or "utf-8", "replace").strip()
    headers = {name: response[name] for name in ("Retry-After", "Allow") if name in response}
    answer = problems.response(
        request, response.status_code, detail or "The request was refused.", headers=headers
    )
    if getattr(response, "database_outage", False):
        answer.database_outage = True  # type: ignore[attr-defined]
    return answer


class ApiMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PREFIX):
            return self.get_response(request)
        if request.method == "OPTIONS" and "Access-Control-Request-Method" in request.headers:
            return _preflight(request)
        allowance = count_request(request)
        if allowance.exceeded:
            response = problems.response(
                request,
                429,
                f"You have made {allowance.limit:,} requests within "
                f"{wait_text(allowance.window)}, the most we take for each "
                f"{allowance.policy}. Nothing was done; try again in "
                f"{wait_text(allowance.reset)}.",
            )
        else:
            response = as_problem(request, self.get_response(request))
        for name, value in allowance.headers().items():
            response[name] = value
        _cors(request, response)
        return response
