"""``import_snapshot``: arXiv's metadata snapshot (one JSON object a line), streamed.

Constant memory: the file is read a line at a time (gzip decompressed as it goes) and written
a batch at a time, each batch in one transaction together with the source's position (the
byte offset of the next line in the uncompressed stream, and its number). An interrupted
import therefore resumes after the last batch stored; a finished one, run again, reads the
file afresh and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import connection, transaction
from django.utils import timezone

from papers.arxiv.errors import IngestError
from papers.arxiv.records import ParsedEntry
from papers.models import (
    Authorship,
    Category,
    CategoryDay,
    HistorySource,
    Listing,
    Paper,
    PaperVersion,
)
from papers.signals import history_stored

from .records import MalformedRecord, SnapshotRecord, read_snapshot_line
from .store import Listable, store_entries, stored_versions, wanted

BATCH = 2_000  # papers a transaction writes: a few seconds of typesetting


@dataclass(frozen=True)
class Progress:
    done: int  # bytes of the file read (compressed bytes for a .gz)
    total: int  # the file's size
    source: HistorySource


def chosen_categories(codes: Sequence[str] | None) -> list[Category]:
    """The categories asked for (each must exist), or every enabled one."""
    if not codes:
        chosen = list(Category.objects.filter(ingest_enabled=True).order_by("code"))
        if not chosen:
            raise IngestError("No category has ingest enabled: name some with --category.")
        return chosen
    found = {category.code: category for category in Category.objects.filter(code__in=codes)}
    unknown = sorted(set(codes) - found.keys())
    if unknown:
        raise IngestError(f"Unknown categories: {', '.join(unknown)} (add them in the admin).")
    return [found[code] for code in dict.fromkeys(codes)]


def _open(path: Path) -> tuple[io.BufferedIOBase, io.BufferedIOBase]:
    """(the stream of lines, the raw file whose position tells the progress)."""
    raw = path.open("rb")
    if raw.read(2) == b"\x1f\x8b":
        raw.seek(0)
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    raw.seek(0)
    return raw, raw


def _lines(
    stream: io.BufferedIOBase, *, offset: int, line: int
) -> Iterator[tuple[int, int, bytes]]:
    """(line number, offset just past it, the line) from ``offset``, which starts line
    ``line + 1``."""
    stream.seek(offset)
    for text in stream:
        offset += len(text)
        line += 1
        yield line, offset, text


def _in_range(record: SnapshotRecord, since: dt.date | None, until: dt.date | None) -> bool:
    day = record.submitted_at.date()
    return (since is None or day >= since) and (until is None or day <= until)


def import_snapshot(
    *,
    path: str | Path,
    categories: Sequence[Category],
    since: dt.date | None = None,
    until: dt.date | None = None,
    batch: int = BATCH,
    on_progress: Callable[[Progress], None] | None = None,
) -> HistorySource:
    """Import the papers of ``categories`` (first submitted between ``since`` and ``until``,
    inclusive, UTC) from the snapshot at ``path``; returns the source with its counts.

    Malformed lines are counted (their numbers kept in ``malformed_at``) and skipped.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise IngestError(f"No such file: {path}")
    codes = {category.code: category.pk for category in categories}
    # The file's size too: a new snapshot saved over an interrupted one's file starts afresh
    # rather than resuming at an offset into different lines.
    total = path.stat().st_size
    key = f"snapshot:{path}:{total}|{','.join(sorted(codes))}|{since or ''}|{until or ''}"
    source, _ = HistorySource.objects.get_or_create(
        key=key[:700], defaults={"kind": HistorySource.Kind.SNAPSHOT}
    )
    resumed = source.finished_at is None and source.started_at is not None
    if not resumed:
        source.restart()
        source.started_at = timezone.now()
        source.save()
    months: set[dt.date] = set()
    # A line can only be kept if it names a chosen code: other whole records are not parsed
    # at all (a bad field in a record of another category is not ours to report). A line that
    # is not a whole object, or has no "categories", is parsed, so that it is reported.
    needles = [code.encode() for code in codes]
    stream, raw = _open(path)
    with stream, raw:
        try:
            pending: list[tuple[int, SnapshotRecord]] = []
            malformed: list[int] = []
            records = 0
            number, offset = source.line, source.offset
            for number, offset, text in _lines(stream, offset=source.offset, line=source.line):
                if not text.strip():
                    continue
                records += 1
                whole = text.rstrip().endswith(b"}") and b'"categories"' in text
                if whole and not any(needle in text for needle in needles):
                    continue
                try:
                    record = read_snapshot_line(text)
                except MalformedRecord:
                    malformed.append(number)
                    continue
                if wanted(record.categories, codes=codes) and _in_range(record, since, until):
                    pending.append((number, record))
                if len(pending) >= batch:
                    months |= _commit(source, pending, malformed, records, codes, offset, number)
                    pending, malformed, records = [], [], 0
                    if on_progress:
                        on_progress(Progress(done=raw.tell(), total=total, source=source))
            months |= _commit(source, pending, malformed, records, codes, offset, number, last=True)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise IngestError(f"Cannot read {path}: {exc}") from exc
    if on_progress:
        on_progress(Progress(done=total, total=total, source=source))
    if source.papers_created:
        analyze()
    if months or resumed:
        # Resumed, the months of the run before are not known here: all are recounted.
        history_stored.send_robust(sender=HistorySource, months=None if resumed else months)
    return source


def analyze() -> None:
    """Bring the planner's statistics up to the tables' new size at once. A bulk import can
    multiply them before autovacuum's next look, and until then the planner, believing a
    category has a thousand listings where it has sixty thousand, joins them one by one."""
    # With what the triggers of papers 0020 and 0021 wrote for the new papers and listings.
    models = (Paper, PaperVersion, Listing, CategoryDay, Authorship)
    tables = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {', '.join(map(connection.ops.quote_name, tables))}")


def _commit(
    source: HistorySource,
    pending: list[tuple[int, SnapshotRecord]],
    malformed: list[int],
    records: int,
    codes: dict[str, int],
    offset: int,
    line: int,
    *,
    last: bool = False,
) -> set[dt.date]:
    # Only the records of papers not stored at this version are read in full (a re-run reads
    # none): the rest only need their listings checked.
    known = stored_versions(record.arxiv_id for _, record in pending)
    entries: list[ParsedEntry] = []
    listables: list[Listable] = []
    for number, record in pending:
        if record.arxiv_id in known and known[record.arxiv_id][1] >= record.version:
            listables.append(Listable(record.arxiv_id, record.categories, record.submitted_at))
            continue
        try:
            entries.append(record.entry())
        except MalformedRecord:
            malformed.append(number)
    malformed.sort()
    with transaction.atomic():
        stored = store_entries(entries=entries, categories=codes, listables=listables, known=known)
        source.records += records
        source.kept += len(entries) + len(listables)
        source.papers_created += stored.papers_created
        source.papers_updated += stored.papers_updated
        source.listings_created += stored.listings_created
        source.note_malformed(malformed)
        source.offset = offset
        source.line = line
        if last:
            source.finished_at = timezone.now()
        source.save()
    return stored.months


__all__ = ["BATCH", "Progress", "chosen_categories", "import_snapshot"]
