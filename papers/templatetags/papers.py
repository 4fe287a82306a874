import datetime as dt
import re

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as format_date
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from .. import code_links

register = template.Library()


@register.filter
def day_heading(day: dt.date) -> str:
    """`Friday 2 October`, with the year only when it is not the current one."""
    if day.year == timezone.localdate().year:
        return format_date(day, "l j F")
    return format_date(day, "l j F Y")


@register.filter
def short_day(day: dt.date) -> str:
    """`Fri 2 Oct`, for the compact index of recent days."""
    if day.year == timezone.localdate().year:
        return format_date(day, "D j M")
    return format_date(day, "D j M Y")


_CREATIVE_COMMONS = re.compile(
    r"creativecommons\.org/(?P<kind>licenses|publicdomain)/(?P<terms>[a-z-]+)/(?P<version>\d+\.\d+)",
    re.IGNORECASE,
)


@register.filter
def licence_name(url: str) -> str:
    """A licence's usual name (`CC BY 4.0`, `arXiv's non-exclusive licence`), from the address
    arXiv gives; the address itself when it is none of those."""
    found = _CREATIVE_COMMONS.search(url or "")
    if found:
        if found["kind"].lower() == "publicdomain":
            return f"CC0 {found['version']}"
        return f"CC {found['terms'].upper()} {found['version']}"
    if "arxiv.org/licenses/nonexclusive-distrib" in (url or ""):
        return "arXiv's perpetual, non-exclusive licence to distribute"
    return url


@register.filter(name="author_link")
def _author_link(name: str) -> SafeString:
    """The name, linking to its author page (whitespace folded: the URL holds one line)."""
    folded = " ".join(name.split())
    if not folded:
        return format_html("{}", name)
    return format_html('<a href="{}">{}</a>', reverse("papers:author", args=[folded]), name)


def _joined(links: list[SafeString]) -> SafeString:
    """`A`, `A and B`, `A, B and C`: the byline's words around already-escaped names."""
    if len(links) <= 1:
        return mark_safe("".join(links))  # noqa: S308 - each link is built by format_html
    head = format_html_join(", ", "{}", ((link,) for link in links[:-1]))
    return format_html("{} and {}", head, links[-1])


@register.filter
def byline(paper) -> SafeString:
    """The short authors (``Paper.short_authors``) with each name linking to its author page."""
    names = [name for name in paper.author_names if name.strip()]
    if paper.more_authors and len(names) <= 3:
        head = format_html_join(", ", "{}", ((_author_link(name),) for name in names))
        return format_html("{} et al.", head)
    if len(names) <= 3:
        return _joined([_author_link(name) for name in names])
    head = format_html_join(", ", "{}", ((_author_link(name),) for name in names[:3]))
    return format_html("{} et al. (+{} more)", head, len(names) - 3)


@register.filter
def all_authors(paper) -> SafeString:
    """Every author, comma-separated, each linking to their author page."""
    names = [name for name in paper.author_names if name.strip()]
    links = format_html_join(", ", "{}", ((_author_link(name),) for name in names))
    return format_html("{} et al.", links) if paper.more_authors and names else links


@register.filter
def code_link(paper) -> code_links.CodeLink | None:
    """The first link to the paper's code or data its comments or abstract name (a list
    entry's marker; the paper page lists them all)."""
    found = code_links.of_paper(paper)
    return found[0] if found else None
