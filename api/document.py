"""The OpenAPI document as the API really answers: django-ninja writes each endpoint's
success from its type hints; this adds what every endpoint shares and no hint says: the
problems it may answer (``application/problem+json``), the 304 of a conditional read, and
the rate-limit headers."""

from __future__ import annotations

from typing import Any

from ninja import NinjaAPI

PROBLEM = {
    "type": "object",
    "description": "RFC 9457 problem details",
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string", "description": "What went wrong, in the web's words"},
        "instance": {"type": "string"},
    },
    "required": ["type", "title", "status", "detail"],
}
LIMIT_HEADERS = {
    "RateLimit-Policy": {"schema": {"type": "string"}, "description": "The quota and window"},
    "RateLimit": {"schema": {"type": "string"}, "description": "What is left, and when"},
}
SHARED = {
    "400": "The request is invalid; nothing was done",
    "404": "No such thing (or not yours)",
    "429": "Too many requests; wait Retry-After seconds",
    "503": "The database is briefly unavailable; nothing was done",
}
WITH_TOKEN = {"401": "No valid token", "403": "The token lacks the scope"}
WRITES = {"409": "Refused, with the reason (as the web words it)"}


def _problem(description: str) -> dict[str, Any]:
    content = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    return {"description": description, "content": content, "headers": LIMIT_HEADERS}


def complete(document: dict[str, Any]) -> dict[str, Any]:
    document.setdefault("components", {}).setdefault("schemas", {})["Problem"] = PROBLEM
    for item in document.get("paths", {}).values():
        for method, operation in item.items():
            responses = operation.setdefault("responses", {})
            for answer in responses.values():
                answer.setdefault("headers", LIMIT_HEADERS)
            wanted = dict(SHARED)
            if operation.get("security"):
                wanted |= WITH_TOKEN
            if method != "get" or operation.get("security"):
                wanted |= WRITES
            for code, description in wanted.items():
                responses.setdefault(code, _problem(description))
            if method == "get" and not operation.get("security"):
                responses["304"] = {"description": "Not modified (If-None-Match matched)"}
    return document


class DocumentedAPI(NinjaAPI):
    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        return complete(super().get_openapi_schema(*args, **kwargs))
