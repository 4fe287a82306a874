"""Which instance and which request a log line comes from.

Behind a load balancer several instances write to one log; each line names the instance
(``INSTANCE_NAME``, by default the host, or host:port under ``peerrevenue/gunicorn_conf.py``)
and the request: the proxy's ``X-Request-ID`` when it sends a sensible one (so a line can be
followed from haproxy's log to ours), else one made here. The response carries it back in
``X-Request-ID``; lines logged outside a request say ``-``.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "X-Request-ID"
# What a proxy's id looks like (haproxy's unique-id, a UUID, a trace id); anything else is
# replaced rather than copied into the logs.
ACCEPTED = re.compile(r"[A-Za-z0-9._:@+=-]{1,128}")

_request_id: ContextVar[str] = ContextVar("request_id", default="-")


def current() -> str:
    return _request_id.get()


class RequestFilter(logging.Filter):
    """Adds ``instance`` and ``request_id`` to every record (the site's log format shows them)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.instance = settings.INSTANCE_NAME
        record.request_id = _request_id.get()
        return True


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        given = request.headers.get(HEADER, "")
        request_id = given if ACCEPTED.fullmatch(given) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        token = _request_id.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            _request_id.reset(token)
        response[HEADER] = request_id
        return response
