"""``harvest``: arXiv's OAI-PMH interface (ListRecords, metadataPrefix=arXivRaw), page by page.

Each page (up to 1,000 records) is stored in one transaction with the resumption token that
continues after it, so an interrupted harvest goes on from the next page; arXiv's flow control
(503 with Retry-After) is honoured by the one HTTP client (``papers.arxiv.client.fetch``). A
harvest that reaches the end without an ``until`` remembers the day it began: the next one
asks only for records changed since then (``from``, inclusive: the day is read twice, which
changes nothing).

A resumption token does not live for ever: arXiv answers ``badResumptionToken`` to one that
expired (a harvest interrupted for long) or belongs to another harvest. Nothing can go on from
it, so it is dropped and the pass starts again from its beginning (the last day a harvest
completed, or the start), once, in the same run, with a warning that quotes arXiv: re-reading
stores nothing twice, and waiting for the next run would only cost an hour. A fresh pass whose
token dies too is something else than expiry: that run fails with arXiv's message, and the next
one starts again by itself.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from papers.arxiv.client import fetch
from papers.arxiv.errors import IngestError
from papers.arxiv.records import ParsedRecord
from papers.arxiv.sniffing import parse_xml
from papers.models import Category, HistorySource
from papers.signals import history_stored

from . import analysis
from .records import MalformedRecord, entry_from_fields
from .store import store_entries, wanted

logger = logging.getLogger(__name__)

OAI = "{http://www.openarchives.org/OAI/2.0/}"
RAW = "{http://arxiv.org/OAI/arXivRaw/}"


class DeadToken(IngestError):
    """The server no longer knows the resumption token asked with (``badResumptionToken``)."""


@dataclass
class OaiPage:
    entries: list[ParsedRecord] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)  # the records' OAI identifiers
    deleted: int = 0
    token: str = ""  # empty on the last page
    responded_on: dt.date | None = None


def _text(element: ET.Element, path: str) -> str:
    found = element.find(path)
    return "".join(found.itertext()) if found is not None else ""


def parse_oai(content: bytes) -> OaiPage:
    """One ListRecords answer. An OAI-PMH error other than "no records match" raises
    ``IngestError``; a record that cannot be read is reported in ``malformed``."""
    root = parse_xml(content)
    if root.tag != f"{OAI}OAI-PMH":
        raise IngestError("Not an OAI-PMH response (no OAI-PMH root element).")
    page = OaiPage()
    responded = _text(root, f"{OAI}responseDate").strip()
    if responded:
        try:
            page.responded_on = dt.datetime.fromisoformat(responded.replace("Z", "+00:00")).date()
        except ValueError as exc:
            raise IngestError(f"An impossible OAI-PMH responseDate {responded[:40]!r}.") from exc
    for error in root.iter(f"{OAI}error"):
        code = error.get("code", "")
        if code == "noRecordsMatch":
            return page
        refused = f"The OAI-PMH server refused: {code} {clean_text(error)}".strip()
        if code == "badResumptionToken":
            raise DeadToken(refused)
        raise IngestError(refused)
    listing = root.find(f"{OAI}ListRecords")
    if listing is None:
        raise IngestError("An OAI-PMH response without ListRecords.")
    for position, record in enumerate(listing.iter(f"{OAI}record"), start=1):
        header = record.find(f"{OAI}header")
        identifier = _text(header, f"{OAI}identifier").strip() if header is not None else ""
        if header is not None and header.get("status") == "deleted":
            page.deleted += 1
            continue
        try:
            page.entries.append(_entry(record))
        except MalformedRecord:
            page.malformed.append(identifier or f"record {position}")
    token = listing.find(f"{OAI}resumptionToken")
    page.token = (token.text or "").strip() if token is not None else ""
    return page


def clean_text(element: ET.Element) -> str:
    return " ".join("".join(element.itertext()).split())


def _entry(record: ET.Element) -> ParsedRecord:
    raw = record.find(f"{OAI}metadata/{RAW}arXivRaw")
    if raw is None:
        raise MalformedRecord("no arXivRaw metadata")
    return entry_from_fields(
        arxiv_id=_text(raw, f"{RAW}id"),
        versions=[
            (version.get("version", ""), _text(version, f"{RAW}date"))
            for version in raw.findall(f"{RAW}version")
        ],
        title=_text(raw, f"{RAW}title"),
        abstract=_text(raw, f"{RAW}abstract"),
        authors=_text(raw, f"{RAW}authors"),
        categories=_text(raw, f"{RAW}categories"),
        comment=_text(raw, f"{RAW}comments"),
        journal_ref=_text(raw, f"{RAW}journal-ref"),
        doi=_text(raw, f"{RAW}doi"),
        report_no=_text(raw, f"{RAW}report-no"),
        license=_text(raw, f"{RAW}license"),
    )


def _begin(
    source: HistorySource, *, set_spec: str, from_date: dt.date | None, until: dt.date | None
) -> dict[str, str]:
    """Start a fresh pass (in memory; its first page saves it); returns the first request."""
    start = from_date or source.harvested_through
    source.restart()
    source.started_at = timezone.now()
    params = {"verb": "ListRecords", "metadataPrefix": "arXivRaw", "set": set_spec}
    if start:
        params["from"] = start.isoformat()
    if until:
        params["until"] = until.isoformat()
    return params


def _since(source: HistorySource) -> str:
    """Where an incremental harvest of ``source`` starts, for a person."""
    if source.harvested_through:
        return f"{source.harvested_through} (the last day a harvest completed)"
    return "the start (no harvest has completed yet)"


def _drop_token(source: HistorySource) -> None:
    """Forget a token the server refused, at once and for good: kept, it would be asked with
    again by every later run, and refused every time."""
    source.token = ""
    source.save(update_fields=["token", "updated_at"])


@dataclass(frozen=True)
class PageDone:
    records: int  # of this page
    source: HistorySource


def harvest(
    *,
    set_spec: str,
    categories: Sequence[Category],
    from_date: dt.date | None = None,
    until: dt.date | None = None,
    max_seconds: float | None = None,
    on_page: Callable[[PageDone], None] | None = None,
) -> HistorySource:
    """Harvest ``set_spec`` into ``categories``; returns the source (``finished_at`` is None
    when ``max_seconds`` ran out first: the next call goes on from the page it reached).

    Without ``from_date`` a harvest is incremental: it goes on with an interrupted one, or
    asks for what changed since the last one began. With ``from_date`` or ``until`` it starts
    a fresh pass over those dates.
    """
    codes = {category.code: category.pk for category in categories}
    key = f"harvest:{set_spec}|{','.join(sorted(codes))}"
    source, _ = HistorySource.objects.get_or_create(
        key=key[:700], defaults={"kind": HistorySource.Kind.HARVEST}
    )
    explicit = from_date is not None or until is not None
    if source.token and not explicit:
        params = {"verb": "ListRecords", "resumptionToken": source.token}
    else:
        if source.abandoned and not explicit:
            logger.warning(
                "The last harvest of %s stopped on a resumption token arXiv refused: starting "
                "again from %s",
                set_spec,
                _since(source),
            )
        params = _begin(source, set_spec=set_spec, from_date=from_date, until=until)
    began = time.monotonic()
    months: set[dt.date] = set()
    statistics = analysis.Statistics(source)
    restarted = False
    try:
        while True:
            try:
                page = parse_oai(fetch(settings.ARXIV_OAI_URL, params=params))
            except DeadToken as exc:
                _drop_token(source)
                if restarted:
                    raise DeadToken(
                        f"{exc}. The token is dropped: the next harvest starts again from "
                        f"{_since(source)}."
                    ) from exc
                restarted = True
                params = _begin(source, set_spec=set_spec, from_date=from_date, until=until)
                logger.warning(
                    "Harvest of %s: %s; the token is dropped, starting again from %s",
                    set_spec,
                    exc,
                    _since(source) if not explicit else params.get("from", "the start"),
                )
                statistics = analysis.Statistics(source)
                continue
            kept = [entry for entry in page.entries if wanted(entry.categories, codes=codes)]
            with transaction.atomic():
                stored = store_entries(entries=kept, categories=codes)
                months |= stored.months
                source.run_date = source.run_date or page.responded_on or timezone.now().date()
                source.records += len(page.entries) + len(page.malformed)
                source.kept += len(kept)
                source.papers_created += stored.papers_created
                source.papers_updated += stored.papers_updated
                source.listings_created += stored.listings_created
                source.note_malformed(list(page.malformed))
                source.token = page.token
                if not page.token:
                    if not explicit or (from_date and not until):
                        source.harvested_through = source.run_date
                    source.finished_at = timezone.now()
                source.save()
            statistics.after_batch()
            if on_page:
                on_page(PageDone(records=len(page.entries) + len(page.malformed), source=source))
            if not page.token:
                return source
            if max_seconds is not None and time.monotonic() - began >= max_seconds:
                return source
            params = {"verb": "ListRecords", "resumptionToken": page.token}
    finally:
        if source.papers_created > 10_000:
            analysis.analyze()
        if months:
            # After the pages' commits: later apps recount what the new listings changed.
            history_stored.send_robust(sender=HistorySource, months=months)
