"""Which page of a list a request asks for, read the same way on every paginated page.

The rule: ``?page=N`` with N a positive whole number is page N; a missing, empty, zero,
negative or non-numeric value is the first page (a mangled or hand-edited link still lands on
the list, not on an error). A page past the last is a 404 where the list says so
(``paginate``), and the last page on search (``papers.search``), as before.
"""

from __future__ import annotations

import re
import sys

from django.core.paginator import EmptyPage, Page, Paginator
from django.http import Http404, HttpRequest

_WHOLE = re.compile(r"[0-9]+", re.ASCII)
# Longer than any page count: parsed as "past the end" rather than as a huge integer.
_MAX_DIGITS = 18


def page_number(request: HttpRequest) -> int:
    """The page ``?page=`` asks for, by the rule above."""
    return number_of(request.GET.get("page"))


def number_of(given: str | None) -> int:
    """The page a ``?page=`` value asks for (None: none given), by the rule above."""
    value = (given or "").strip()
    if not _WHOLE.fullmatch(value):
        return 1
    number = int(value) if len(value) <= _MAX_DIGITS else sys.maxsize
    return max(number, 1)


def paginate(request: HttpRequest, items, *, per_page: int) -> Page:
    """The requested page of ``items``; a page past the last is a 404 (nothing is there)."""
    return page_of(items, request.GET.get("page"), per_page=per_page)


def page_of(items, given: str | None, *, per_page: int) -> Page:
    """``paginate`` for a kept piece, rendered without the request: the ``?page=`` value it
    was given."""
    try:
        return Paginator(items, per_page).page(number_of(given))
    except EmptyPage:
        raise Http404("There is no such page.") from None
