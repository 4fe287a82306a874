"""Template context for every page (settings.TEMPLATES lists these)."""

from __future__ import annotations

from django.http import HttpRequest

from .highlighted_html import PageTerms

PAGE_TERMS = "market_page_terms"


def page_terms(request: HttpRequest) -> dict[str, PageTerms]:
    # Reads nothing until a template highlights a text, so pages without abstracts pay nothing.
    return {PAGE_TERMS: PageTerms(request=request)}
