"""Highlight listed terms in typeset HTML: each mention becomes a link to the term's page.

The input is the stored, sanitised HTML of a title or abstract. Terms are looked for only in
text, never inside MathML, code or an existing link, with the same matcher that counts mentions
for dividends.
"""

from __future__ import annotations

import html
import re

from django import template
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe

from ..highlighting import current_matcher
from ..tickers import current_tickers

register = template.Library()

_TOKEN = re.compile(r"<[^>]*>|[^<]+")
_TAG = re.compile(r"<(/?)([a-zA-Z][\w:-]*)")
# Elements whose text is never highlighted: formulas, code and links (no link in a link).
_OPAQUE = {"math", "code", "a"}


def _link(text: str, ref, tickers) -> str:
    ticker = tickers.get(ref.id)
    title = ticker.hover_text if ticker else ref.phrase
    return (
        f'<a class="term" href="{reverse("market:term", args=[ref.slug])}"'
        f' title="{html.escape(title)}">{html.escape(text, quote=False)}</a>'
    )


def highlight(markup: str) -> str:
    matcher = current_matcher()
    if not matcher.terms or not markup:
        return markup
    tickers = None
    out: list[str] = []
    opaque_depth = 0
    for token in _TOKEN.findall(markup):
        if token.startswith("<"):
            tag = _TAG.match(token)
            if tag and tag.group(2).lower() in _OPAQUE:
                opaque_depth += -1 if tag.group(1) else 1
            out.append(token)
            continue
        if opaque_depth > 0:
            out.append(token)
            continue
        text = html.unescape(token)
        matches = matcher.find_mentions(text)
        if not matches:
            out.append(token)
            continue
        if tickers is None:
            tickers = current_tickers()
        position = 0
        for match in matches:
            out.append(html.escape(text[position : match.start], quote=False))
            out.append(_link(text[match.start : match.end], match.term, tickers))
            position = match.end
        out.append(html.escape(text[position:], quote=False))
    return "".join(out)


@register.filter(is_safe=True)
def highlight_terms(markup: str) -> SafeString:
    """``{{ paper.abstract_html|highlight_terms }}``: the input must already be sanitised HTML."""
    return mark_safe(highlight(markup))  # noqa: S308 - input is sanitised, output escapes text
