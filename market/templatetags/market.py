"""Highlighted terms in titles and abstracts: ``{% highlight_terms paper.abstract_html %}``.

The input must already be sanitised HTML (the stored typeset HTML); the output escapes text.
All highlighting on one page shares one ``PageTerms`` (put in every template's context by
``market.context_processors.page_terms``), so the term set and the prices are read once a page.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from ..context_processors import PAGE_TERMS
from ..term_links import PageTerms, highlight

__all__ = ["highlight", "highlight_terms"]

register = template.Library()


@register.simple_tag(takes_context=True, name="highlight_terms")
def highlight_terms(context: template.Context, markup: str) -> SafeString:
    # Without the context processor (a template rendered outside a request) each text reads
    # the term set and prices for itself: correct, only slower.
    page = context.get(PAGE_TERMS) or PageTerms()
    return mark_safe(page.highlight(markup))  # noqa: S308 - input is sanitised, output escapes text
