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
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from django.conf import settings
from django.core.signals import request_finished, request_started
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


def request_id_of(environ: Mapping[str, Any]) -> str:
    """The proxy's id for this request when it is a sensible one, else a new one."""
    given = environ.get("HTTP_X_REQUEST_ID", "")
    return given if ACCEPTED.fullmatch(given) else uuid.uuid4().hex


def _started(sender, environ, **kwargs) -> None:
    _request_id.set(request_id_of(environ))


def _finished(sender, **kwargs) -> None:
    _request_id.set("-")


# Set when the request starts and cleared when its response is closed, not by the middleware
# alone: Django logs a 4xx/5xx after the last middleware has returned.
request_started.connect(_started, dispatch_uid="peerrevenue.requestlog.started")
request_finished.connect(_finished, dispatch_uid="peerrevenue.requestlog.finished")


class RequestIdMiddleware:
    """Gives the request its id (``request.request_id``) and the response its header."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _request_id.get() == "-":  # a handler that sent no request_started
            _started(None, request.META)
        request.request_id = _request_id.get()  # type: ignore[attr-defined]
        response = self.get_response(request)
        response[HEADER] = request.request_id  # type: ignore[attr-defined]
        return response
