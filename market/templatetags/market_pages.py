"""Filters for the market pages: money, signed changes and sanitised Markdown.

Money is shown with ``market.units.format_credits`` (exact, never rounded) padded to two
decimals, the way people expect a balance to look: ``1,000.00 credits``, ``5.151 credits``.
"""

from __future__ import annotations

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe

from ..charts import credits_number

register = template.Library()

MINUS = "\u2212"


def credits_text(micro: int, *, unit: bool = True, signed: bool = False) -> str:
    """``1_000_000_000`` → ``1,000.00 credits``; ``signed`` adds ``+`` (or a real minus)."""
    number = credits_number(int(micro))
    if signed and micro > 0:
        number = "+" + number
    number = number.replace("-", MINUS)
    if not unit:
        return number
    return f"{number} credit" if micro == 1_000_000 else f"{number} credits"


@register.filter
def money(micro: int | None) -> str:
    return "" if micro is None else credits_text(micro)


@register.filter
def money_number(micro: int | None) -> str:
    """Without the unit, for table cells under a column that names it."""
    return "" if micro is None else credits_text(micro, unit=False)


@register.filter
def money_signed(micro: int | None, bare: str = "") -> str:
    """``+12.50 credits``; ``|money_signed:"bare"`` leaves the unit out."""
    return "" if micro is None else credits_text(micro, signed=True, unit=not bare)


@register.filter
def percent_bp(basis_points: int | None) -> str:
    """A change in basis points as ``+4.5%``, ``−0.3%`` or ``0.0%``."""
    if basis_points is None:
        return ""
    sign = "+" if basis_points > 0 else MINUS if basis_points < 0 else ""
    return f"{sign}{abs(basis_points) / 100:.1f}%"


@register.filter
def trend(value: int | None) -> str:
    """A CSS modifier for a signed number: ``up``, ``down`` or ``flat``."""
    if not value:
        return "flat"
    return "up" if value > 0 else "down"


# Markdown ---------------------------------------------------------------------------------

_MARKDOWN_TAGS = {
    "p", "br", "hr", "h2", "h3", "h4", "ul", "ol", "li", "em", "strong", "code", "pre",
    "blockquote", "a", "table", "thead", "tbody", "tr", "th", "td", "sup", "sub",
}  # fmt: skip

_CLEANER = nh3.Cleaner(
    tags=_MARKDOWN_TAGS,
    attributes={"a": {"href", "title"}, "th": {"align"}, "td": {"align"}},
    url_schemes={"http", "https", "mailto"},
    link_rel="nofollow noopener noreferrer",
    strip_comments=True,
    # Drop what is inside <script>/<style> too, not just the tags.
    clean_content_tags={"script", "style"},
)


def render_markdown(text: str) -> str:
    """Markdown → HTML, then an allowlist sanitiser: raw HTML in the source (scripts, event
    handlers, ``javascript:`` links, images) never reaches the page."""
    html = markdown_lib.markdown(
        text or "", extensions=["tables", "fenced_code", "sane_lists"], output_format="html"
    )
    return _CLEANER.clean(html)


@register.filter(is_safe=True)
def markdown(text: str) -> SafeString:
    return mark_safe(render_markdown(text))  # noqa: S308 - sanitised just above
