"""Highlighted terms in titles and abstracts: ``{% highlight_terms paper.abstract_html %}``.

The input must already be sanitised HTML (the stored typeset HTML); the output escapes text,
and each link's hover title is a price hole that the response fills (``peerrevenue.keep``).
All highlighting on one page shares one ``PageTerms`` (put in every template's context by
``market.context_processors.page_terms``, or by a kept render), so the term set is read once.

A block that shows highlighted text and otherwise depends only on a few values is kept whole,
rendered once until those values or the term set change::

    {% highlighted_fragment "paper" paper.pk paper.stamp %}…{% endhighlighted_fragment %}
"""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from peerrevenue import keep

from ..context_processors import PAGE_TERMS
from ..highlighted_html import PageTerms, highlight

__all__ = ["highlight", "highlight_terms", "highlighted_fragment", "hole"]

register = template.Library()


def page_terms(context: template.Context) -> PageTerms:
    """The render's PageTerms: the request's (context processor), or one for the facts a kept
    piece is rendered under, made once and shared by the rest of the render."""
    page = context.get(PAGE_TERMS)
    if page is None:
        facts = context.get(keep.KEPT_FACTS)
        page = PageTerms(terms=facts["terms"] if facts is not None else None)
        context.dicts[0][PAGE_TERMS] = page
    return page


@register.simple_tag(takes_context=True, name="highlight_terms")
def highlight_terms(context: template.Context, markup: str) -> SafeString:
    page = page_terms(context)
    return mark_safe(page.highlight(markup))  # noqa: S308 - input is sanitised, output escapes text


@register.filter(name="highlight_terms", is_safe=True)
def highlight_terms_filter(markup: str) -> SafeString:
    """``{{ html|highlight_terms }}``: it reads the term set for each text, where the tag
    shares one read with the whole page."""
    return mark_safe(PageTerms().highlight(markup))  # noqa: S308 - as the tag


@register.simple_tag(name="hole")
def hole(kind: str, *arguments: object) -> SafeString:
    """``{% hole "you" holder.user_id %}``: a place the response fills per request (several
    arguments are joined by colons: ``{% hole "saved" paper.pk paper.arxiv_id %}``)."""
    return mark_safe(keep.hole(kind, ":".join(map(str, arguments))))  # noqa: S308 - private-use marker, no markup


class HighlightedFragmentNode(template.Node):
    def __init__(self, name, vary_on, nodelist) -> None:
        self.name = name
        self.vary_on = vary_on
        self.nodelist = nodelist

    def render(self, context: template.Context) -> str:
        page = page_terms(context)
        vary_on = [value.resolve(context) for value in self.vary_on]
        return page.fragment(
            self.name.resolve(context), vary_on, lambda: self.nodelist.render(context)
        )


@register.tag
def highlighted_fragment(parser, token) -> HighlightedFragmentNode:
    """``{% highlighted_fragment "name" value… %}…{% endhighlighted_fragment %}``: the block must
    depend on nothing but the values listed (and the market's term set)."""
    bits = token.split_contents()
    if len(bits) < 2:
        raise template.TemplateSyntaxError(f"{bits[0]} needs a name and the values it varies on")
    nodelist = parser.parse(("endhighlighted_fragment",))
    parser.delete_first_token()
    return HighlightedFragmentNode(
        parser.compile_filter(bits[1]), [parser.compile_filter(bit) for bit in bits[2:]], nodelist
    )
