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
            response = self.get_response(request)
        for name, value in allowance.headers().items():
            response[name] = value
        _cors(request, response)
        return response
