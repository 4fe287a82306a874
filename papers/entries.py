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

from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from peerrevenue import keep, replicas
from peerrevenue.db import prepared_rows

from .models import Category, Listing, Paper
from .templatetags.papers import day_heading

if TYPE_CHECKING:
    from .day_groups import Day

STREAM_SQL = "(" + ", ".join(f"'{kind}'" for kind in Listing.STREAM_TYPES) + ")"

ENTRY_TEMPLATE = "includes/paper_entry.html"


@dataclass(slots=True)
class Entry:
    """One listing of a category page: what its key needs, then its HTML."""

    date: dt.date | None  # None on an author's page, which lists papers, not listings
    paper_id: int
    stamp: int
    version: int | None  # the version a replacement announced; None in the stream
    html: SafeString = SafeString("")


# The page's stream slice (its days, from an entry's place in the first) and the replacements
# of the days that end on it, in page order, in one statement. A part's bounds are its days'
# dates, so neither reads a row of another day however long the category's history is.
# Built as SQL rather than by the ORM: compiling the union cost more than running it.
_ENTRIES_SQL = f"""
(SELECT 0 AS part, l.date, p.arxiv_id, l.paper_id, p.stamp, l.version
 FROM papers_listing AS l JOIN papers_paper AS p ON p.id = l.paper_id
 WHERE l.category_id = %(category)s AND l.announce_type IN {STREAM_SQL}
   AND l.date BETWEEN %(last)s::date AND %(first)s::date AND NOT p.hidden
 ORDER BY l.date DESC, p.arxiv_id OFFSET %(skip)s LIMIT %(count)s)
UNION ALL
(SELECT 1, l.date, p.arxiv_id, l.paper_id, p.stamp, l.version
 FROM papers_listing AS l JOIN papers_paper AS p ON p.id = l.paper_id
 WHERE l.category_id = %(category)s AND l.announce_type NOT IN {STREAM_SQL}
   AND l.date <= coalesce(%(high)s::date, 'infinity')
   AND l.date > coalesce(%(low)s::date, '-infinity') AND NOT p.hidden)
ORDER BY part, date DESC, arxiv_id
"""


def entry_rows(
    *,
    category_id: int,
    stream: tuple[dt.date, dt.date, int, int] | None,
    replaced: tuple[dt.date | None, dt.date | None],
) -> list[Entry]:
    """A page's visible listings as entries to fill (no paper is loaded): the stream's
    ``(last day, first day, place in the first day, how many)``, then the replacements of the
    days after ``replaced``'s low date up to its high one (None: no bound), each in page order.
    """
    last, first, skip, count = stream or (None, None, 0, 0)
    low, high = replaced
    params = {
        "category": category_id,
        "last": last,
        "first": first,
        "skip": skip,
        "count": count,
        "low": low,
        "high": high,
    }
    # Prepared: planning its subqueries costs Postgres more than running them.
    rows = prepared_rows(_ENTRIES_SQL, params, using=replicas.reading_connection())
    return [
        Entry(date, paper_id, stamp, version if part else None)
        for part, date, _, paper_id, stamp, version in rows
    ]


def fill(
    entries: Iterable[Entry], *, category: Category | None, facts: keep.Facts
) -> dict[int, Paper]:
    """Give every entry its HTML: kept ones from the store in one look-up, the others rendered
    from their papers, loaded together in one query (returned, by id). Without a category
    (an author's page) the label names each paper's primary category."""
    entries = list(entries)
    code, name = (category.code, category.name) if category else (None, None)
    keys = {
        index: keep.key("entry", facts["terms"], e.paper_id, e.stamp, code, name, e.version)
        for index, e in enumerate(entries)
    }
    papers: dict[int, Paper] = {}

    def render(missing: list[int]) -> dict[int, str]:
        wanted = {entries[index].paper_id for index in missing}
        loaded = Paper.objects.for_entries().in_bulk(wanted)
        papers.update(loaded)
        made = {}
        for index in missing:
            entry = entries[index]
            replacement = {"version": entry.version} if entry.version is not None else None
            made[index] = keep.render_piece(
                ENTRY_TEMPLATE,
                {"paper": loaded[entry.paper_id], "category": category, "replacement": replacement},
                facts=facts,
            )
        return made

    found = keep.get_or_make_many(keys, render, size=len)
    for index, entry in enumerate(entries):
        entry.html = mark_safe(found[index])  # noqa: S308 - rendered by our template, escaped there
    return papers


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
