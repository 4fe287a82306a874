"""``/robots.txt``: crawlers may read every public page (listings, papers, authors, the market,
terms, the Atom feeds) and are kept out of what is private, a form's target or a machine's.

Its rules use RFC 9309's ``*`` for the per-term JSON and form targets under ``/market/<term>/``,
which a prefix alone cannot reach without shutting out the term pages themselves. Written
without a template, so that it costs no database query (a template would run the context
processors, which read the market).
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

# Private pages (signed-in readers' own), sign-in and sign-up, the admin, and what machines
# read (JSON, /metrics, /healthz) or post to. Search results are endless combinations of the
# same papers, each of which has its own page.
DISALLOWED = (
    "/admin/",
    "/accounts/",
    "/searches/",
    "/search/",
    "/portfolio/",
    "/library/",
    "/watching/",
    "/recommended/",
    "/orders/",
    "/metrics",
    "/healthz",
    "/market/propose/",
    "/market/tickers.json",
    "/market/*/quote",
    "/market/*/offer.json",
    "/market/*/trade/",
    "/market/*/order/",
    "/market/*/follow/",
    "/list/*/watch/",
    "/abs/*/save/",
    "/abs/*/tags/",
    "/abs/*/read/",
)

ROBOTS_TXT = "User-agent: *\n" + "".join(f"Disallow: {path}\n" for path in DISALLOWED)


@require_safe
@cache_control(public=True, max_age=24 * 60 * 60)
def robots_txt(request: HttpRequest) -> HttpResponse:
    return HttpResponse(ROBOTS_TXT, content_type="text/plain; charset=utf-8")
