"""A category page's entries: each paper's entry kept by what it shows, the page made of them.

An entry shows its paper, the category it is listed in (the label says "Cross-listed from…"),
the version a replacement announced, and the market's terms (its price holes are filled per
response). Its key is made of exactly those: the paper's stamp (which its row trigger moves on
any change to the paper), the category's code and name, the version and the term set. So an
edit of one paper renders one entry again, and the page around it is assembled from kept
entries and two light queries (``papers.days``) instead of thirty model instances.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import models
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from peerrevenue import keep

from .models import Category, ListingQuerySet, Paper
from .templatetags.papers import day_heading

if TYPE_CHECKING:
    from .days import Day

ENTRY_TEMPLATE = "includes/paper_entry.html"


@dataclass(slots=True)
class Entry:
    """One listing of a category page: what its key needs, then its HTML."""

    date: dt.date
    paper_id: int
    stamp: int
    version: int | None  # the version a replacement announced; None in the stream
    html: SafeString = SafeString("")


def entry_rows(parts: Iterable[tuple[ListingQuerySet, int, int | None, bool]]) -> list[Entry]:
    """The visible listings of every part, ``(listings, offset, limit, replacement)``, as
    entries to fill (no paper is loaded): in one query, part after part, each in page order.

    A part's offset and limit apply to it alone (the stream's slice of its days); a
    replacement part's entries carry the version the replacement announced.
    """
    queries = []
    for number, (listings, offset, limit, replacement) in enumerate(parts):
        rows = (
            listings.visible()
            .order_by("-date", "paper__arxiv_id")
            .annotate(
                part=models.Value(number),
                arxiv=models.F("paper__arxiv_id"),
                announced=models.Value(replacement),
            )
            .values_list(
                "part", "date", "arxiv", "paper_id", "paper__stamp", "version", "announced"
            )
        )
        queries.append(rows[offset : offset + limit] if limit is not None else rows[offset:])
    if len(queries) > 1:
        # Each part keeps its own order inside the union; the order of the parts is ours.
        queries = [queries[0].union(*queries[1:], all=True).order_by("part", "-date", "arxiv")]
    return [
        Entry(date, paper_id, stamp, version if replacement else None)
        for _, date, _, paper_id, stamp, version, replacement in (queries[0] if queries else [])
    ]


def fill(entries: Iterable[Entry], *, category: Category, facts: keep.Facts) -> None:
    """Give every entry its HTML: kept ones from the store in one look-up, the others rendered
    from their papers, loaded together in one query."""
    entries = list(entries)
    keys = [
        keep.key(
            "entry", facts["terms"], e.paper_id, e.stamp, category.code, category.name, e.version
        )
        for e in entries
    ]
    found = keep.lookup_many(keys)
    missing = [e.paper_id for e, k in zip(entries, keys, strict=True) if k not in found]
    papers = Paper.objects.defer("search_vector").in_bulk(missing) if missing else {}
    for entry, key in zip(entries, keys, strict=True):
        html = found.get(key)
        if html is None:
            replacement = {"version": entry.version} if entry.version is not None else None
            html = keep.render_piece(
                ENTRY_TEMPLATE,
                {"paper": papers[entry.paper_id], "category": category, "replacement": replacement},
                facts=facts,
            )
            keep.put(key, html)
            found[key] = html
        entry.html = mark_safe(html)  # noqa: S308 - rendered by our template, escaped there


def days_html(days: Iterable[Day], *, category: Category) -> SafeString:
    """The page's days around their filled entries, as ``includes/days.html`` shows them.

    Joined here rather than in a template: after one paper's edit, the page is thirty kept
    strings and a few tags, and a template loop over them cost more than everything else.
    """
    out = []
    for day in days:
        iso = day.date.isoformat()
        url = reverse("papers:category_date", args=[category.code, iso])
        out.append(
            f'<section class="day" aria-labelledby="day-{iso}">\n'
            f'<h2 class="day__heading" id="day-{iso}"><a href="{escape(url)}">'
            f"{escape(day_heading(day.date))}</a></h2>\n"
        )
        if day.listings:
            out += ['<ol class="papers">\n', *(e.html for e in day.listings), "</ol>\n"]
        if day.replacements:
            opened = "" if day.listings else " open"
            out += [
                f'<details class="replacements"{opened}>\n',
                f"<summary>Replacements ({len(day.replacements)})</summary>\n",
                '<ol class="papers">\n',
                *(e.html for e in day.replacements),
                "</ol>\n</details>\n",
            ]
        out.append("</section>\n")
    return mark_safe("".join(out))  # noqa: S308 - entries are ours, escaped there; the rest above
