import datetime as dt

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as format_date
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

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
    if len(names) <= 3:
        return _joined([_author_link(name) for name in names])
    head = format_html_join(", ", "{}", ((_author_link(name),) for name in names[:3]))
    return format_html("{} et al. (+{} more)", head, len(names) - 3)


@register.filter
def all_authors(paper) -> SafeString:
    """Every author, comma-separated, each linking to their author page."""
    names = [name for name in paper.author_names if name.strip()]
    return format_html_join(", ", "{}", ((_author_link(name),) for name in names))
