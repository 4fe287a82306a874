"""Where a form sends the reader back to: the page they came from, if it is this site's."""

from __future__ import annotations

import re

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme

# What a browser would not read as a path of this site: a second "/" or a "\" right after the
# first (another host), and anywhere a backslash, whitespace or a control character, which
# browsers drop or turn into "/" before they look for a host.
_NOT_A_LOCAL_PATH = re.compile(r"^/[/\\]|[\\\s\x00-\x1f\x7f]")


def safe_next(request: HttpRequest) -> str:
    """The ``next`` page of the request (POST, else GET) if it is a path on this site (one
    leading ``/``), else "": the caller then uses its own default.

    Only a path: ``redirect()`` tries anything else as the name of a URL pattern first, so a
    bare word (``next=x``) would raise after the write it follows was committed, and a
    relative or absolute address could lead anywhere.
    """
    url = request.POST.get("next") or request.GET.get("next") or ""
    if not url.startswith("/") or _NOT_A_LOCAL_PATH.search(url):
        return ""
    allowed = url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return url if allowed else ""
