"""``import_snapshot``: arXiv's metadata snapshot (one JSON object a line), streamed.

Constant memory: the file is read a line at a time (gzip decompressed as it goes) and written
a batch at a time, each batch in one transaction together with the source's position (the
byte offset of the next line in the uncompressed stream, and its number). An interrupted
import therefore resumes after the last batch stored; a finished one, run again, reads the
file afresh and changes nothing.

The lines are parsed and typeset by worker processes (``pipeline``) while this process writes;
a big import into a small history sets the papers' GIN indexes aside and builds them at its
end (``indexes``).
"""

from __future__ import annotations

import datetime as dt
import gzip
import io
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from papers.arxiv.errors import IngestError
from papers.arxiv.records import ParsedRecord
from papers.models import Category, HistorySource
from papers.signals import history_stored

from . import analysis, indexes
from .pipeline import Chunk, Filters, Prepared, chunked, prepared_in_order
from .records import MalformedRecord, read_snapshot_line
from .store import Listable, store_entries, stored_versions

BATCH = 2_000  # papers a transaction writes: a few seconds of typesetting
CHUNK = 500  # lines a worker process reads at a time
SMALL_FILE = 4 * 2**20  # bytes: a file smaller is read in this process (a few thousand lines)


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


def import_snapshot(
    *,
    path: str | Path,
    categories: Sequence[Category],
    since: dt.date | None = None,
    until: dt.date | None = None,
    batch: int = BATCH,
    workers: int | None = None,
    rebuild_indexes: bool | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> HistorySource:
    """Import the papers of ``categories`` (first submitted between ``since`` and ``until``,
    inclusive, UTC) from the snapshot at ``path``; returns the source with its counts.

    Malformed lines are counted (their numbers kept in ``malformed_at``) and skipped.
    ``workers``: processes that read and typeset the records beside this one, which writes
    (0: none, all here; by default one fewer than the machine's cores, none for a small file).
    ``rebuild_indexes``: whether to drop the papers' GIN indexes and build them again at the
    end (``papers.history.indexes``); by default, when the import turns out to bring more
    papers than are stored (and many).
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise IngestError(f"No such file: {path}")
    codes = {category.code: category.pk for category in categories}
    # The file's size too: a new snapshot saved over an interrupted one's file starts afresh
    # rather than resuming at an offset into different lines.
    total = path.stat().st_size
    if workers is None:
        workers = default_workers(total)
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
    filters = Filters(codes=codes, since=since, until=until)
    stream, raw = _open(path)
    with stream, raw:
        # Where this run starts in the file (of a gzip file, not known before reading it).
        start = source.offset if stream is raw else 0
        plan = indexes.Plan(source, wanted=rebuild_indexes, start=start, total=total)
        statistics = analysis.Statistics(source)
        try:
            lines = _lines(stream, offset=source.offset, line=source.line)
            chunks = chunked(lines, size=min(CHUNK, batch), stored=_stored)
            read: list[tuple[dict[int, bytes], Prepared]] = []
            offset, number = source.offset, source.line
            # Closed on the way out, whatever stops the loop: the worker processes end with it.
            with closing(prepared_in_order(chunks, filters=filters, workers=workers)) as ordered:
                for chunk, prepared in ordered:
                    read.append((_unread(chunk, prepared), prepared))
                    offset, number = chunk.offset, chunk.line
                    if sum(len(done.kept) for _, done in read) >= batch:
                        months |= _commit(source, read, codes, offset, number)
                        read = []
                        statistics.after_batch()
                        plan.after_batch(done=raw.tell())
                        if on_progress:
                            on_progress(Progress(done=raw.tell(), total=total, source=source))
            months |= _commit(source, read, codes, offset, number, last=True)
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise IngestError(f"Cannot read {path}: {exc}") from exc
    if on_progress:
        on_progress(Progress(done=total, total=total, source=source))
    plan.finish()
    if source.papers_created:
        analysis.analyze()
    if months or resumed:
        # Resumed, the months of the run before are not known here: all are recounted.
        history_stored.send_robust(sender=HistorySource, months=None if resumed else months)
    return source


def default_workers(size: int) -> int:
    """Processes to read a file of ``size`` bytes beside the one writing: one fewer than the
    cores (the writer and PostgreSQL need the rest; none on one core), none for a file too
    small to pay for starting them."""
    if size < SMALL_FILE:
        return 0
    return max(0, (os.cpu_count() or 1) - 1)


def _stored(arxiv_ids: list[str]) -> dict[str, int]:
    return {arxiv_id: version for arxiv_id, (_, version) in stored_versions(arxiv_ids).items()}


def _commit(
    source: HistorySource,
    read: list[tuple[dict[int, bytes], Prepared]],
    codes: dict[str, int],
    offset: int,
    line: int,
    *,
    last: bool = False,
) -> set[dt.date]:
    """Store the chunks read since the last batch, with the position after them, in one
    transaction."""
    malformed = [number for _, prepared in read for number in prepared.malformed]
    # Decided again here, from what is stored now: the chunks were told before they were sent,
    # and a batch stored meanwhile may hold one of their papers.
    kept = [item for _, prepared in read for item in prepared.kept]
    known = stored_versions(item.arxiv_id for item in kept)
    entries: list[ParsedRecord] = []
    listables: list[Listable] = []
    made: dict[str, dict[str, Any]] = {}
    days: dict[str, dt.date] = {}
    for item in kept:
        if item.arxiv_id in known and known[item.arxiv_id][1] >= item.version:
            listables.append(Listable(item.arxiv_id, item.categories, item.submitted_at, item.day))
            continue
        entry = item.entry
        if entry is None:  # said stored when its chunk was sent, and deleted since
            try:
                entry = read_snapshot_line(_text(read, item.number)).entry()
            except MalformedRecord:
                malformed.append(item.number)
                continue
        entries.append(entry)
        days[item.arxiv_id] = item.day
        if item.paper is not None:
            made[item.arxiv_id] = item.paper
    malformed.sort()
    with transaction.atomic():
        # A crash may lose the last batches committed without this wait for the disk, but
        # never a batch without its position (they commit together): the resumed import
        # redoes exactly what was lost.
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO off")
        stored = store_entries(
            entries=entries,
            categories=codes,
            listables=listables,
            known=known,
            made=made,
            days=days,
        )
        source.records += sum(prepared.records for _, prepared in read)
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


def _unread(chunk: Chunk, prepared: Prepared) -> dict[int, bytes]:
    """The lines of the kept records a worker did not read in full (said stored), which the
    batch may yet need: only those are held until it commits, not the whole chunk (when one
    line in thirty is of a chosen category, a batch spans a hundred chunks)."""
    numbers = {item.number for item in prepared.kept if item.entry is None}
    return {number: text for number, text in chunk.lines if number in numbers}


def _text(read: list[tuple[dict[int, bytes], Prepared]], number: int) -> bytes:
    return next(lines[number] for lines, _ in read if number in lines)


__all__ = ["BATCH", "Progress", "chosen_categories", "import_snapshot"]
