"""The site's answer to a request that failed because something it needs is not there.

A database that cannot be reached (restarting, failed over, out of connections) is not a bug
in the page: the reader gets a 503 that says to try again shortly, with ``Retry-After``, and
the proxy in front can tell it from a 500. Every other failure is Django's 500 page.

A write (any unsafe method) that could not even connect to the primary, or that came while
this process knows the primary is unreachable (``peerrevenue.availability``), wrote nothing:
its 503 says so, that nothing was traded or saved. A write that lost the database midway may
have committed, so its page says to look once the site is back.
"""

from __future__ import annotations

import sys

import psycopg
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.template import loader
from django.views import defaults

from . import availability

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


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})


def database_unavailable(request: HttpRequest) -> HttpResponse:
    if request.method not in SAFE_METHODS and (
        DEFAULT_DB_ALIAS in availability.refused_in_this_request()
    ):
        return writes_paused(request)
    return _outage_page("503.html")


def writes_paused(request: HttpRequest) -> HttpResponse:
    """The answer to a write while the primary cannot be reached: nothing was written."""
    return _outage_page("503_nothing_saved.html")


def _outage_page(template: str) -> HttpResponse:
    # A template of its own that needs no context processor: nothing here may ask the
    # database (or the cache, which may be the database) anything.
    response = HttpResponse(
        loader.get_template(template).render(), status=503, content_type="text/html"
    )
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    # Read by peerrevenue.replicas, which may answer a GET again from elsewhere.
    response.database_outage = True  # type: ignore[attr-defined]
    return response


def server_error(request: HttpRequest, template_name: str = "500.html") -> HttpResponse:
    """``handler500``: Django calls it while handling the exception, from a view or from any
    middleware (sessions saved, the page cache read), so ``sys.exc_info()`` is that exception."""
    if caused_by_database_outage(sys.exc_info()[1]):
        return database_unavailable(request)
    return defaults.server_error(request, template_name=template_name)
