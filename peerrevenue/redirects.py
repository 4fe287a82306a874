"""Where a form sends the reader back to: the page they came from, if it is this site's."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.http import url_has_allowed_host_and_scheme


def safe_next(request: HttpRequest) -> str:
    """The ``next`` page of the request (POST, else GET) if it is on this site, else "".

    Django lets "//" and "/\\" through (no host named), but a browser reads a URL that starts
    so as the address of another site: those are refused too.
    """
    url = request.POST.get("next") or request.GET.get("next") or ""
    allowed = url_has_allowed_host_and_scheme(
        url, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return url if allowed and not url.startswith(("//", "/\\")) else ""
