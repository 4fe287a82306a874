"""Highlighted terms in titles and abstracts: ``{% highlight_terms paper.abstract_html %}``.

The input must already be sanitised HTML (the stored typeset HTML); the output escapes text.
All highlighting on one page shares one ``PageTerms`` (put in every template's context by
``market.context_processors.page_terms``), so the term set and the prices are read once a page.

A block that shows highlighted text and otherwise depends only on a few values can be kept
whole, rendered once per process until those values, the term set or a price change::

    {% highlighted_fragment "paper" paper.pk paper.modified_at %}…{% endhighlighted_fragment %}

A template whose output is kept across trades (``peerrevenue.fragments``) starts with
``{% leave_prices_open %}``, and the page that shows its output fills the prices in with
``{% fill_prices html %}``.
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from peerrevenue import fragments

from ..context_processors import PAGE_TERMS
from ..term_links import PageTerms, highlight

__all__ = [
    "fill_prices",
    "highlight",
    "highlight_terms",
    "highlighted_fragment",
    "leave_prices_open",
]

register = template.Library()


@register.simple_tag(takes_context=True, name="highlight_terms")
def highlight_terms(context: template.Context, markup: str) -> SafeString:
    # Without the context processor (a template rendered outside a request) each text reads
    # the term set and prices for itself: correct, only slower.
    page = context.get(PAGE_TERMS) or PageTerms()
    return mark_safe(page.highlight(markup))  # noqa: S308 - input is sanitised, output escapes text


@register.filter(name="highlight_terms", is_safe=True)
def highlight_terms_filter(markup: str) -> SafeString:
    """``{{ html|highlight_terms }}``, for templates written before the tag: it reads the term
    set and prices for each text, where the tag shares one read with the whole page."""
    return mark_safe(PageTerms().highlight(markup))  # noqa: S308 - as the tag


class HighlightedFragmentNode(template.Node):
    def __init__(self, name, vary_on, nodelist) -> None:
        self.name = name
        self.vary_on = vary_on
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        page = context.get(PAGE_TERMS)
        if page is None:  # outside a request: nothing to share, render as it is
            return self.nodelist.render(context)
        vary_on = [value.resolve(context) for value in self.vary_on]
        return page.fragment(
            self.name.resolve(context), vary_on, lambda: self.nodelist.render(context)
        )


@register.tag
def highlighted_fragment(parser, token) -> HighlightedFragmentNode:
    """``{% highlighted_fragment "name" value… %}…{% endhighlighted_fragment %}``: the block must
    depend on nothing but the values listed (and the market's terms and prices)."""
    bits = token.split_contents()
    if len(bits) < 2:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a name and the values it varies on")
    nodelist = parser.parse(("endhighlighted_fragment",))
    parser.delete_first_token()
    return HighlightedFragmentNode(
        parser.compile_filter(bits[1]), [parser.compile_filter(bit) for bit in bits[2:]], nodelist
    )


@register.simple_tag(takes_context=True)
def leave_prices_open(context: template.Context) -> str:
    """From here on, this template's highlighted terms get open titles (no prices), for a page
    that keeps its output longer than a price table lasts."""
    if context.get(PAGE_TERMS) is None:
        context[PAGE_TERMS] = PageTerms(defer_prices=True)
    else:
        context[PAGE_TERMS].defer_prices = True
    return ""


@register.simple_tag(takes_context=True)
def fill_prices(context: template.Context, markup: str) -> SafeString:
    """HTML from a template that left its prices open, with the current ones: on a page
    rendered by ``fragments.render_page``, as bytes put straight into the response."""
    page = context.get(PAGE_TERMS) or PageTerms()
    request = context.get("request")
    slot = None
    if request is not None and "\ue000" in markup:
        slot = fragments.slot_for(request, page.filled_piece(markup))
    return mark_safe(slot if slot is not None else page.fill_prices(markup))  # noqa: S308 - HTML this site rendered
