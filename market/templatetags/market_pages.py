"""Filters for the market pages: money, signed changes, names that wrap, sanitised Markdown.

Money is written by ``market.units.format_credits``, the one formatter of the site:
``1,000.00 credits``; ``|money_exact`` gives the up to four decimals a quote's fee breakdown needs.
"""

from __future__ import annotations

import functools
import re

import markdown as markdown_lib
import nh3
from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from ..units import MINUS, format_credits

register = template.Library()


@register.filter
def money(micro: int | None) -> str:
    return "" if micro is None else format_credits(micro)


@register.filter
def money_exact(micro: int | None) -> str:
    """Up to four decimals, for the figures of a quote's fee breakdown only."""
    return "" if micro is None else format_credits(micro, exact=True)


@register.filter
def money_number(micro: int | None) -> str:
    """Without the unit, for table cells under a column that names it."""
    return "" if micro is None else format_credits(micro, unit=False)


@register.filter
def money_signed(micro: int | None, bare: str = "") -> str:
    """``+12.50 credits``; ``|money_signed:"bare"`` leaves the unit out."""
    return "" if micro is None else format_credits(micro, signed=True, unit=not bare)


@register.filter
def percent_bp(basis_points: int | None) -> str:
    """A change in basis points as ``+4.5%``, ``−0.3%`` or ``0.0%``."""
    if basis_points is None:
        return ""
    tenths = int((abs(basis_points) + 5) // 10)  # half away from zero, in whole tenths
    sign = "" if not tenths else "+" if basis_points > 0 else MINUS
    return f"{sign}{tenths // 10}.{tenths % 10}%"


# The smallest change each kind of figure shows: a cent of credits (0.01, in µ¢) and a tenth of
# a percent (10 basis points). Anything smaller reads 0.00 or 0.0%, and must look flat too.
_SHOWN_STEP = {"money": 10_000, "bp": 10}


@register.filter
def trend(value: int | None, unit: str = "money") -> str:
    """A CSS modifier for a signed number as shown: ``up``, ``down`` or ``flat``. ``unit`` is
    ``money`` (µ¢, shown to the cent) or ``bp`` (basis points, shown as a percent)."""
    step = _SHOWN_STEP[unit]
    if not value or abs(value) * 2 < step:  # rounds half away from zero, as it is written
        return "flat"
    return "up" if value > 0 else "down"


# Where a user name may wrap in a narrow column: after the separators names are made of
# ("rhea_with_a_long_name", "ada.lovelace@example.org"); a hyphen is one already.
_NAME_BREAKS = re.compile(r"(?<=[._@+])(?=.)")


@register.filter
def breakable(name: str) -> SafeString:
    """``name`` escaped, with a ``<wbr>`` after each ``.``, ``_``, ``@`` and ``+`` inside it: a
    long name wraps between its parts rather than in the middle of a word."""
    return mark_safe("<wbr>".join(escape(part) for part in _NAME_BREAKS.split(str(name))))  # noqa: S308 - every part is escaped


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


# A pure function of the text: a term page made again after each trade of its term shows the
# same description, which need not be parsed again.
@functools.lru_cache(maxsize=1024)
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


@register.filter
def threshold(basis_points: int | None) -> str:
    """A follow's threshold: ``1000`` → ``10%``."""
    return "" if basis_points is None else f"{basis_points / 100:g}%"
