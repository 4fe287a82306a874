"""The site's answer to a request that failed because something it needs is not there.

A database that cannot be reached (restarting, failed over, out of connections) is not a bug
in the page: the reader gets a 503 that says to try again shortly, with ``Retry-After``, and
the proxy in front can tell it from a 500. Every other failure is Django's 500 page.
"""

from __future__ import annotations

import sys

import psycopg
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.views import defaults

# Django's wrapped errors, and the driver's own where Django does not wrap them: a cursor's
# close() is not wrapped (utils.CursorWrapper wraps only execute and fetch), and closing a
# server-side cursor on a connection the pooler dropped raises psycopg's OperationalError as is.
DATABASE_UNAVAILABLE = (
    OperationalError,
    InterfaceError,
    psycopg.OperationalError,
    psycopg.InterfaceError,
)
RETRY_AFTER_SECONDS = 5


def caused_by_database_outage(exc: BaseException | None) -> bool:
    """Whether ``exc``, or what it was raised from or while handling, is the database being
    unreachable (an error raised while rendering a page about a lost connection counts too)."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, DATABASE_UNAVAILABLE):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def database_unavailable(request: HttpRequest) -> HttpResponse:
    # A template of its own that needs no context processor: nothing here may ask the
    # database (or the cache, which may be the database) anything.
    response = HttpResponse(
        loader.get_template("503.html").render(), status=503, content_type="text/html"
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    """``handler500``: Django calls it while handling the exception, from a view or from any
    middleware (sessions saved, the page cache read), so ``sys.exc_info()`` is that exception."""
    if caused_by_database_outage(sys.exc_info()[1]):
        return database_unavailable(request)
    return defaults.server_error(request, template_name=template_name)
