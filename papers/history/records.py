"""One bulk record (a snapshot line, an arXivRaw record) as the ``ParsedRecord`` ingest knows.

Both sources are read field by field the same way (the one author string split as the feed's
is, titles and names unwrapped, abstracts kept as written), so the same paper comes out the
same whichever source brought it.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import json
import re
from dataclasses import dataclass
from typing import Any

from papers.arxiv.fields import EARLIEST_DATE, clean
from papers.arxiv.records import ParsedRecord
from papers.arxiv.rss import read_byline
from papers.identifiers import ARXIV_ID

_ID_RE = re.compile(rf"^{ARXIV_ID}$")
_VERSION_RE = re.compile(r"^v(\d+)$")


class MalformedRecord(ValueError):
    """A record that cannot be read; the message says what is wrong with it."""


_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {name: number for number, name in enumerate(_MONTH_NAMES, start=1)}


def _gmt(value: str) -> dt.datetime | None:
    """arXiv's own spelling, `Mon, 2 Apr 2007 19:18:42 GMT`, read directly (a snapshot has
    millions, and the general parser costs more than the rest of a re-run's line)."""
    parts = value.split()
    if len(parts) != 6 or parts[5] != "GMT" or parts[2] not in _MONTHS:
        return None
    clock = parts[4].split(":")
    if len(clock) != 3 or not all(part.isdigit() for part in (parts[1], parts[3], *clock)):
        return None
    hour, minute, second = map(int, clock)
    return dt.datetime(
        int(parts[3]), _MONTHS[parts[2]], int(parts[1]), hour, minute, second, tzinfo=dt.UTC
    )


def parse_created(value: object) -> dt.datetime:
    """`Mon, 2 Apr 2007 19:18:42 GMT` → an aware datetime (UTC)."""
    if not isinstance(value, str) or not value.strip():
        raise MalformedRecord("a version without its date")
    try:
        moment = _gmt(value) or email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise MalformedRecord(f"an impossible version date {value[:60]!r}") from exc
    moment = moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
    if moment.date() < EARLIEST_DATE or moment.year > dt.date.today().year + 1:
        raise MalformedRecord(f"a version date out of range {value[:60]!r}")
    return moment.astimezone(dt.UTC)


def entry_from_fields(
    *,
    arxiv_id: object,
    versions: list[tuple[str, object]],
    title: object,
    abstract: object,
    authors: object,
    categories: object,
    comment: object = "",
    journal_ref: object = "",
    doi: object = "",
    report_no: object = "",
    license: object = "",
) -> ParsedRecord:
    """The entry for a record's fields, or ``MalformedRecord``. ``versions``: (label such as
    "v2", its `created` date) in any order."""
    if not isinstance(arxiv_id, str) or not _ID_RE.match(arxiv_id.strip()):
        raise MalformedRecord(f"no arXiv id ({str(arxiv_id)[:40]!r})")
    arxiv_id = arxiv_id.strip()
    dated: dict[int, dt.datetime] = {}
    for label, created in versions:
        number = _VERSION_RE.match(label.strip()) if isinstance(label, str) else None
        if number is None:
            raise MalformedRecord(f"{arxiv_id}: a version labelled {str(label)[:20]!r}")
        dated[int(number[1])] = parse_created(created)
    if 1 not in dated:
        raise MalformedRecord(f"{arxiv_id}: no first version")
    texts = {"title": title, "abstract": abstract, "authors": authors, "categories": categories}
    for name, value in texts.items():
        if not isinstance(value, str) or not value.strip():
            raise MalformedRecord(f"{arxiv_id}: no {name}")
    extras = {
        "comment": comment,
        "journal_ref": journal_ref,
        "doi": doi,
        "report_no": report_no,
        "license": license,
    }
    for name, value in extras.items():
        if value is not None and not isinstance(value, str):
            raise MalformedRecord(f"{arxiv_id}: {name} is not text")
    assert isinstance(title, str) and isinstance(abstract, str)
    assert isinstance(authors, str) and isinstance(categories, str)
    current = max(dated)
    byline, more_authors = read_byline(authors)
    return ParsedRecord(
        arxiv_id=arxiv_id,
        version=current,
        title=clean(title),
        abstract=abstract.strip(),
        authors=byline,
        more_authors=more_authors,
        categories=categories.split(),
        listing_version=1,
        comment=clean(comment if isinstance(comment, str) else ""),
        journal_ref=clean(journal_ref if isinstance(journal_ref, str) else ""),
        # Several DOIs are one field, separated by spaces (0704.0033 has two): all are kept.
        doi=clean(doi if isinstance(doi, str) else ""),
        report_no=clean(report_no if isinstance(report_no, str) else ""),
        license=(license if isinstance(license, str) else "").strip(),
        submitted_at=dated[1],
        updated_at=dated[current],
        version_dates=dict(sorted(dated.items())),
    ).bounded()


@dataclass(frozen=True)
class SnapshotRecord:
    """A snapshot line read only as far as deciding about it takes: its id, current version,
    categories and first submission. ``entry()`` reads the rest (authors, dates, caps)."""

    fields: dict[str, Any]
    arxiv_id: str
    version: int
    categories: list[str]
    submitted_at: dt.datetime

    def entry(self) -> ParsedRecord:
        record = self.fields
        versions = record["versions"]
        if not all(isinstance(version, dict) for version in versions):
            raise MalformedRecord(f"{self.arxiv_id}: a version is not an object")
        return entry_from_fields(
            arxiv_id=record.get("id"),
            versions=[(version.get("version"), version.get("created")) for version in versions],
            title=record.get("title"),
            abstract=record.get("abstract"),
            authors=record.get("authors"),
            categories=record.get("categories"),
            comment=record.get("comments") or "",
            journal_ref=record.get("journal-ref") or "",
            doi=record.get("doi") or "",
            report_no=record.get("report-no") or "",
            license=record.get("license") or "",
        )


def read_snapshot_line(line: bytes) -> SnapshotRecord:
    """One line of ``arxiv-metadata-oai-snapshot.json``, read lightly, or ``MalformedRecord``."""
    try:
        record = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedRecord(f"not JSON ({exc})") from exc
    if not isinstance(record, dict):
        raise MalformedRecord("not a JSON object")
    arxiv_id, categories, versions = (
        record.get("id"),
        record.get("categories"),
        record.get("versions"),
    )
    if not isinstance(arxiv_id, str) or not _ID_RE.match(arxiv_id.strip()):
        raise MalformedRecord(f"no arXiv id ({str(arxiv_id)[:40]!r})")
    if not isinstance(categories, str) or not categories.split():
        raise MalformedRecord(f"{arxiv_id}: no categories")
    if not isinstance(versions, list) or not versions or not isinstance(versions[0], dict):
        raise MalformedRecord(f"{arxiv_id}: no versions")
    numbers = []
    for version in versions:
        label = version.get("version") if isinstance(version, dict) else None
        number = _VERSION_RE.match(label.strip()) if isinstance(label, str) else None
        if number is None:
            raise MalformedRecord(f"{arxiv_id}: a version labelled {str(label)[:20]!r}")
        numbers.append(int(number[1]))
    first = versions[numbers.index(1)] if 1 in numbers else None
    if first is None:
        raise MalformedRecord(f"{arxiv_id}: no first version")
    return SnapshotRecord(
        fields=record,
        arxiv_id=arxiv_id.strip(),
        version=max(numbers),
        categories=categories.split(),
        submitted_at=parse_created(first.get("created")),
    )


def parse_snapshot_line(line: bytes) -> ParsedRecord:
    """One line of the snapshot, read in full, or ``MalformedRecord``."""
    return read_snapshot_line(line).entry()
