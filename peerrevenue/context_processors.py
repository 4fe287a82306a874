"""Template context for every page (settings.TEMPLATES lists these)."""

from __future__ import annotations

from functools import cache

from django.http import HttpRequest
from django.templatetags.static import static
from django.urls import NoReverseMatch, reverse


def _address(name: str) -> str:
    try:
        return reverse(name)
    except NoReverseMatch:  # a part of the site not installed
        return ""


@cache
def _frame_links() -> dict[str, str]:
    """Where the frame of every page (header, navigation, search, styles) links to. These
    change only with a deploy, which starts new processes, so each process works them out
    once rather than a dozen reverse() and static() calls on each of its requests."""
    return {
        "home": _address("papers:home"),
        "market": _address("market:index"),
        "leaderboard": _address("market:leaderboard"),
        "rules": _address("market:rules"),
        "watching": _address("papers:watching"),
        "portfolio": _address("market:portfolio") or _address("preferences"),
        "saved_searches": _address("saved_searches"),
        "preferences": _address("preferences"),
        "logout": _address("logout"),
        "login": _address("login"),
        "signup": _address("signup"),
        "search": _address("papers:search"),
        "hot": _address("library:hot"),
        "library": _address("library:library"),
        "recommended": _address("library:recommended"),
        "favicon": static("favicon.svg"),
        "site_css": static("css/site.css"),
        "math_css": static("css/math.css"),
        "traders_css": static("css/traders.css"),
        "terms_js": static("js/terms.js"),
        "place_js": static("js/place.js"),
    }


def frame_links(request: HttpRequest) -> dict[str, dict[str, str]]:
    return {"frame": _frame_links()}


def page_query(request: HttpRequest) -> dict[str, object]:
    """The query string that pagination and sort links keep. A kept piece, rendered without
    the request, is given its own (``peerrevenue.keep``)."""
    return {"page_query": request.GET}
