"""The API itself: one NinjaAPI at /api/v1/, its routers, its errors and its document.

django-ninja rather than Django REST framework: the shapes are pydantic models and the
OpenAPI 3.1 document is generated from the endpoints' type hints (one place to change), it
adds no serializer layer between the domain functions and the answer, and its views are plain
synchronous Django views, which suits the gunicorn sync workers and the middleware the site
already runs (replicas, limits, request ids).
"""

from __future__ import annotations

from . import (
    acting,  # noqa: F401 - its endpoints join the market router
    dumps_endpoints,
    library_endpoints,
    market_endpoints,
    papers_endpoints,
    problems,
)
from .document import DocumentedAPI

DESCRIPTION = """\
Everything the site shows, for programs. Reading needs no token; acting needs a personal
token (made in your settings) sent as `Authorization: Bearer …`, with the scope the endpoint
names. Money is in µ¢ (a millionth of a credit). Errors are `application/problem+json`.
Answers carry `ETag` and `Last-Modified`: send them back (`If-None-Match`,
`If-Modified-Since`) and an unchanged answer is a 304. Lists are paged by `next_cursor`.
Every answer says its limit in `RateLimit-Policy` and `RateLimit`; past it, 429 with
`Retry-After`. Trades and orders take an `Idempotency-Key` header: a retry with the same
key gets the first answer. Nightly dumps of trades, prices and dividends: `/dumps`.
"""

api = DocumentedAPI(
    title="Peer Revenue API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api",
    docs_url=None,  # the reference page is the site's own (api.views.reference)
    openapi_url="/openapi.json",
)
problems.install(api)
api.add_router("", papers_endpoints.router)
api.add_router("", market_endpoints.router)
api.add_router("", library_endpoints.router)
api.add_router("", dumps_endpoints.router)
