"""The Python half of a snapshot import, in worker processes: lines → records → typeset papers.

Reading a record in full and typesetting it cost about as much as PostgreSQL's share of
storing it, and both ran one after the other in one process. Here the lines are sent, a chunk
at a time, to worker processes that parse and typeset them while the importing process writes
the chunk before to the database: the machine's second core does the Python work. Results come
back in the order the chunks were sent (what a resumable import needs: a batch's position
covers every line before it), and only a few chunks are in flight at once, so memory stays
constant whatever the file's size.

The workers read no database. What the importing process says is stored (per chunk, asked
just before sending it) only spares them the work of reading and typesetting a paper already
stored at that version; the importing process decides again, in the batch's transaction, from
what is stored then.
"""

from __future__ import annotations

import datetime as dt
import multiprocessing
import re
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from papers.arxiv.errors import IngestError
from papers.arxiv.records import ParsedRecord

from .records import MalformedRecord, SnapshotRecord, read_snapshot_line
from .store import listing_day, new_paper, wanted

# How many chunks may wait for or be in a worker at once, per worker: enough that a worker
# never waits for the importing process, few enough to keep memory flat.
IN_FLIGHT = 3

# A record's categories, when written without escapes (as the snapshot writes codes).
_CATEGORIES = re.compile(rb'"categories"\s*:\s*"([^"\\]*)"')

# The snapshot writes each object with its id first: enough to ask what is stored without
# decoding the line (a line it does not match is simply read in full).
_ID = re.compile(rb'^\s*\{\s*"id"\s*:\s*"([^"\\]{1,32})"')


@dataclass(frozen=True)
class Filters:
    """What the import keeps: the chosen codes (code → category id) and the first-submission
    range."""

    codes: dict[str, int]
    since: dt.date | None = None
    until: dt.date | None = None
    _encoded: frozenset[bytes] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_encoded", frozenset(code.encode() for code in self.codes))

    def skips_unread(self, text: bytes) -> bool:
        """Whether the line is a whole record whose categories are none of the chosen ones:
        other records are not parsed at all (a bad field in a record of another category is
        not ours to report). A line that is not a whole object, or does not say its categories
        once and plainly, is parsed, so that it is reported or read as JSON reads it."""
        if not text.rstrip().endswith(b"}") or text.count(b'"categories"') != 1:
            return False
        found = _CATEGORIES.search(text)
        if found is None:
            return False
        return self._encoded.isdisjoint(found[1].split())

    def keeps(self, record: SnapshotRecord) -> bool:
        day = record.submitted_at.date()
        return (
            wanted(record.categories, codes=self.codes)
            and (self.since is None or day >= self.since)
            and (self.until is None or day <= self.until)
        )


@dataclass(frozen=True)
class Chunk:
    """Consecutive lines of the file: (line number, the line), and where the next line starts."""

    lines: list[tuple[int, bytes]]
    offset: int  # the byte offset just past the last line
    line: int  # the last line's number
    stored: dict[str, int] = field(default_factory=dict)  # arXiv id → stored version (a hint)


@dataclass(frozen=True)
class Kept:
    """A record in the chosen categories and dates, read as far as storing it takes."""

    number: int  # its line
    arxiv_id: str
    version: int
    categories: list[str]
    submitted_at: dt.datetime  # v1
    day: dt.date  # the day v1 would have been listed
    entry: ParsedRecord | None = None  # read in full: not stored at this version when asked
    paper: dict[str, Any] | None = None  # the entry's new paper, typeset (``new_paper``)


@dataclass
class Prepared:
    """A chunk, read: what the batch it joins needs of it."""

    records: int = 0  # non-blank lines
    malformed: list[int] = field(default_factory=list)  # line numbers
    kept: list[Kept] = field(default_factory=list)


def prepare(chunk: Chunk, filters: Filters) -> Prepared:
    """Read a chunk's lines: count them, note the malformed ones, and read those kept (in full,
    and typeset as a new paper, unless ``chunk.stored`` has them at this version or newer)."""
    prepared = Prepared()
    for number, text in chunk.lines:
        if not text.strip():
            continue
        prepared.records += 1
        if filters.skips_unread(text):
            continue
        try:
            record = read_snapshot_line(text)
        except MalformedRecord:
            prepared.malformed.append(number)
            continue
        if not filters.keeps(record):
            continue
        entry = paper = None
        if chunk.stored.get(record.arxiv_id, 0) < record.version:
            try:
                entry = record.entry()
            except MalformedRecord:
                prepared.malformed.append(number)
                continue
            # A stored paper's newer version is typeset by the update, if its TeX changed.
            if record.arxiv_id not in chunk.stored:
                paper = new_paper(entry)
        prepared.kept.append(
            Kept(
                number=number,
                arxiv_id=record.arxiv_id,
                version=record.version,
                categories=record.categories,
                submitted_at=record.submitted_at,
                day=listing_day(record.submitted_at),
                entry=entry,
                paper=paper,
            )
        )
    return prepared


def ids_in(lines: Iterable[tuple[int, bytes]]) -> list[str]:
    """The arXiv ids the lines start with (those written id first)."""
    found = (_ID.match(text) for _, text in lines)
    return [match[1].decode() for match in found if match]


# The filters of the import a worker serves, set once when it starts (not sent with every
# chunk).
_filters: Filters | None = None


def _start_worker(filters: Filters) -> None:
    global _filters
    _filters = filters


def _prepare_in_worker(chunk: Chunk) -> Prepared:
    assert _filters is not None
    return prepare(chunk, _filters)


def prepared_in_order(
    chunks: Iterator[Chunk], *, filters: Filters, workers: int
) -> Generator[tuple[Chunk, Prepared]]:
    """Each chunk and what it holds, in order: read by ``workers`` processes (0: here, one
    chunk at a time).

    Raises ``IngestError`` if a worker process dies (killed, out of memory): the batches
    stored before are kept, and the next run resumes after them.
    """
    if workers <= 0:
        for chunk in chunks:
            yield chunk, prepare(chunk, filters)
        return
    # Forked, the workers start with Django set up and the typesetter imported; they never use
    # the database connection they inherit (only this process does).
    context = multiprocessing.get_context("fork")
    pool = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_start_worker, initargs=(filters,)
    )
    waiting: deque[tuple[Chunk, Future[Prepared]]] = deque()
    try:
        for chunk in chunks:
            waiting.append((chunk, pool.submit(_prepare_in_worker, chunk)))
            if len(waiting) >= workers * IN_FLIGHT:
                chunk, future = waiting.popleft()
                yield chunk, future.result()
        while waiting:
            chunk, future = waiting.popleft()
            yield chunk, future.result()
    except BrokenProcessPool as exc:
        raise IngestError(
            "A worker process reading the snapshot stopped unexpectedly (killed, or out of "
            "memory?); what was stored before is kept: run the command again to resume."
        ) from exc
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def chunked(
    lines: Iterator[tuple[int, int, bytes]],
    *,
    size: int,
    stored: Callable[[list[str]], dict[str, int]],
) -> Iterator[Chunk]:
    """The lines (number, offset past it, text) in chunks of ``size``, each with what
    ``stored`` says is stored of the papers it names (arXiv id → version)."""
    batch: list[tuple[int, bytes]] = []
    offset = line = 0
    for line, offset, text in lines:
        batch.append((line, text))
        if len(batch) >= size:
            yield Chunk(batch, offset, line, stored(ids_in(batch)))
            batch = []
    if batch:
        yield Chunk(batch, offset, line, stored(ids_in(batch)))


__all__ = ["Chunk", "Filters", "Kept", "Prepared", "chunked", "prepare", "prepared_in_order"]
