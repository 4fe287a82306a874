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

from django.utils.safestring import SafeString, mark_safe

from peerrevenue import keep

from .models import Category, ListingQuerySet, Paper

ENTRY_TEMPLATE = "includes/paper_entry.html"


@dataclass(slots=True)
class Entry:
    """One listing of a category page: what its key needs, then its HTML."""

    date: dt.date
    paper_id: int
    stamp: int
    version: int | None  # the version a replacement announced; None in the stream
    html: SafeString = SafeString("")


def entry_rows(
    listings: ListingQuerySet, *, offset: int = 0, limit: int | None = None, replacement=False
) -> list[Entry]:
    """The visible ``listings`` in page order, as entries to fill (no paper is loaded)."""
    rows = (
        listings.visible()
        .order_by("-date", "paper__arxiv_id")
        .values_list("date", "paper_id", "paper__stamp", "version")
    )
    sliced = rows[offset : offset + limit] if limit is not None else rows[offset:]
    return [
        Entry(date, paper_id, stamp, version if replacement else None)
        for date, paper_id, stamp, version in sliced
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
