"""arXiv API responses (export.arxiv.org/api/query): Atom, by id or by search."""

from __future__ import annotations

import datetime as dt
import re
import xml.etree.ElementTree as ET
from dataclasses import replace

from papers.arxiv.errors import IngestError
from papers.arxiv.fields import clean, parse_iso, split_id, without_et_al
from papers.arxiv.records import ParsedAuthor, ParsedFeed, ParsedRecord
from papers.arxiv.sniffing import ATOM, detect_format, parse_xml
from papers.calendar import announcement_date_for

ARXIV = "{http://arxiv.org/schemas/atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"


def parse_api(content: bytes, *, date: dt.date | None = None) -> ParsedFeed:
    """Parse an export.arxiv.org/api/query Atom response.

    With `date`, every entry is listed on that date at its current version (new/cross for v1,
    replace/replace-cross after). Without it, each entry is dated by arXiv's schedule from its
    first submission (`announcement_date_for`) and announces version 1.
    """
    if detect_format(content) != "api":
        raise IngestError("Expected an arXiv API Atom response, got an RSS feed.")
    root = parse_xml(content)

    def number(path: str) -> int | None:
        text = _text(root, path)
        return int(text) if text.isdigit() else None

    entries = [_api_entry(element, date=date) for element in root.iterfind(f"{ATOM}entry")]
    dates = {entry.announced_on for entry in entries}
    feed_date = date if date is not None else (dates.pop() if len(dates) == 1 else None)
    return ParsedFeed(
        format="api",
        date=feed_date,
        entries=entries,
        total_results=number(f"{OPENSEARCH}totalResults"),
        start_index=number(f"{OPENSEARCH}startIndex") or 0,
    )


def _text(element: ET.Element, path: str) -> str:
    found = element.find(path)
    return clean(found.text) if found is not None and found.text else ""


def _raw_text(element: ET.Element, path: str) -> str:
    """Abstracts keep their line structure: an indented line starts a new paragraph."""
    found = element.find(path)
    return found.text.strip() if found is not None and found.text else ""


def _api_entry(element: ET.Element, *, date: dt.date | None) -> ParsedRecord:
    raw_id = _text(element, f"{ATOM}id")
    if "/api/errors" in raw_id:
        # The API reports a bad query as a single entry titled "Error".
        reason = _text(element, f"{ATOM}summary")
        raise IngestError(f"The arXiv API refused the query: {reason}")
    ids = split_id(raw_id)
    if ids is None:
        raise IngestError(f"An API entry has an unrecognised id {raw_id!r}.")
    arxiv_id, version = ids
    primary = element.find(f"{ARXIV}primary_category")
    categories = [term for cat in element.iterfind(f"{ATOM}category") if (term := cat.get("term"))]
    primary_term = primary.get("term", "") if primary is not None else ""
    if primary_term:
        categories = [primary_term, *[c for c in categories if c != primary_term]]
    authors = [
        ParsedAuthor(
            name=_text(author, f"{ATOM}name"),
            affiliation="; ".join(
                clean(aff.text) for aff in author.iterfind(f"{ARXIV}affiliation") if aff.text
            ),
        )
        for author in element.iterfind(f"{ATOM}author")
    ]
    authors = [author for author in authors if author.name]
    # The API splits the same byline, "et al" included: it is no author there either.
    more_authors = False
    if authors:
        last, more_authors = without_et_al(authors[-1].name)
        if more_authors:
            authors[-1:] = [replace(authors[-1], name=last)] if last else []
    doi = _text(element, f"{ARXIV}doi")
    if not doi:
        for link in element.iterfind(f"{ATOM}link"):
            if link.get("title") == "doi" and link.get("href"):
                doi = re.sub(r"^https?://(dx\.)?doi\.org/", "", link.get("href", ""))
    submitted_at = parse_iso(
        _text(element, f"{ATOM}published"), what=f"API entry {arxiv_id}'s <published>"
    )
    if date is not None:
        announced_on = date
    elif submitted_at is not None:
        announced_on = announcement_date_for(submitted_at)
    else:
        raise IngestError(f"API entry {arxiv_id} has no submission date to date it by.")
    return ParsedRecord(
        arxiv_id=arxiv_id,
        version=version,
        title=_text(element, f"{ATOM}title"),
        abstract=_raw_text(element, f"{ATOM}summary"),
        authors=authors,
        more_authors=more_authors and bool(authors),
        categories=categories,
        announced_on=announced_on,
        listing_version=None if date is not None else 1,
        comment=_text(element, f"{ARXIV}comment"),
        journal_ref=_text(element, f"{ARXIV}journal_ref"),
        doi=doi,
        submitted_at=submitted_at,
        updated_at=parse_iso(
            _text(element, f"{ATOM}updated"), what=f"API entry {arxiv_id}'s <updated>"
        ),
    ).bounded()
