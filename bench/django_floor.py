"""Django's own floor, for ``bench/pages.py --floors``: the site's settings with one view that
serves the page's bytes. ``BENCH_FLOOR=bare``: no middleware at all, so a request costs
Django's handler, its URL resolver and a response; ``BENCH_FLOOR=reader``: Django's session and
auth middleware only, reading the signed-in reader the way the site does (``accounts.sessions``,
one statement) and nothing else; ``BENCH_FLOOR=stack``: the site's whole middleware, with the
same view (no template, no query of its own); ``BENCH_FLOOR=facts``: sessions and auth as for
``reader``, and the view reads the facts every kept page reads (``peerrevenue.keep.read``, which
loads the session in the same statement, as on the site's pages): the least a signed-in page
keyed on its data can do.

    DJANGO_SETTINGS_MODULE=django_floor BENCH_FLOOR=reader gunicorn peerrevenue.wsgi
"""

from __future__ import annotations

import os
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.urls import re_path

from peerrevenue.settings import *  # noqa: F403 - the site's database, cache and sessions

ROOT_URLCONF = __name__
MICROCACHE_SECONDS = 0  # every request reaches the view, as the floor's name says
FLOOR = os.environ.get("BENCH_FLOOR", "bare")
READER = FLOOR != "bare"
if FLOOR == "bare":
    MIDDLEWARE = []
elif FLOOR in ("reader", "facts"):
    MIDDLEWARE = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.contrib.auth.middleware.AuthenticationMiddleware",
    ]
# else "stack": the site's own middleware, all of it (from peerrevenue.settings).

_BODY = Path(os.environ.get("BENCH_BODY_FILE", os.devnull)).read_bytes()
_CONTENT_TYPE = os.environ.get("BENCH_CONTENT_TYPE", "text/html; charset=utf-8")


def page(request: HttpRequest) -> HttpResponse:
    if FLOOR == "facts":
        from peerrevenue import keep  # not while the settings load: it reads them

        keep.read(request)
    response = HttpResponse(_BODY, content_type=_CONTENT_TYPE)
    if READER:
        # bench/pages.py checks that its cookie signed the reader in.
        response["X-Reader"] = request.user.get_username() or "-"
    return response


urlpatterns = [re_path(r"", page)]
