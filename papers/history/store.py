"""The one write path of bulk history: papers by COPY, typeset, and approximate listings.

``store_entries`` writes one batch; the caller holds the transaction, so that a batch and the
note of how far the source has been read commit together (what makes an import resumable).
Re-storing a batch changes nothing: a stored paper is only touched by a newer version (or by
its current one while some of its versions are undated: ``stored_versions``), and a listing is
only added where the paper has none in the category's stream.

Order of the writes, for speed at millions of papers: the new papers' keys are drawn from
their sequence first, then their versions and listings are inserted, and the papers last, by
COPY. The statement triggers that restamp a version's or a listing's paper
(papers/sql/stamps.sql) then find no paper row to rewrite, where the other order would write
each new paper three times (its full-text vector and GIN entries each time). Foreign keys are
checked at commit (Django makes them deferrable, initially deferred), when every row is there.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from papers.arxiv.records import ParsedRecord
from papers.calendar import announcement_date_for
from papers.ingest import WRITTEN_FIELDS, apply_entry
from papers.models import IngestRun, Listing, Paper, PaperVersion


@dataclass
class Stored:
    papers_created: int = 0
    papers_updated: int = 0
    listings_created: int = 0
    months: set[dt.date] = field(default_factory=set)  # of the listings created (first days)


@dataclass(frozen=True)
class Listable:
    """What listing a stored paper takes: enough of a record not to parse the rest of it."""

    arxiv_id: str
    categories: Sequence[str]  # primary first
    submitted_at: dt.datetime  # v1
    day: dt.date | None = None  # listing_day(submitted_at), if the caller has it already


def listing_day(submitted_at: dt.datetime) -> dt.date:
    """The day a paper was (most likely) first listed: from v1's submission, holidays kept."""
    return announcement_date_for(submitted_at, holidays=True)


def wanted(categories: Iterable[str], *, codes: Iterable[str]) -> bool:
    return not set(categories).isdisjoint(codes)


def new_paper(entry: ParsedRecord) -> dict[str, Any]:
    """The columns of the paper an entry makes when nothing of it is stored, typeset (its key
    and clocks are the store's): the costliest part of storing a new paper in Python, which
    may run in another process. Plain values, which cross to the writing process cheaply (a
    model instance took longer to unpickle than to write)."""
    paper = Paper(arxiv_id=entry.arxiv_id)
    apply_entry(paper, entry)
    paper.typeset()
    values = paper.__dict__
    return {name: values[name] for name in _COPIED if name not in _AUTOMATIC}


def stored_versions(arxiv_ids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """arXiv id → (primary key, version stored in full) of the stored ones among ``arxiv_ids``.

    In full: the current version, or the one before it while some version is undated (a
    paper from the daily feed, or stored before every version's date was kept). A record of
    the current version is then read again, as a newer one would be, and completes the paper
    (dates, DOIs, report number, byline); once it has, a re-run passes it by.
    """
    wanted = list(arxiv_ids)
    if not wanted:
        return {}
    table = connection.ops.quote_name(Paper._meta.db_table)
    rows = _bound(
        f"SELECT arxiv_id, id, version - (jsonb_array_length(version_dates) < version"  # noqa: S608 - the table name only
        f" OR version_dates @> '[null]'::jsonb)::int FROM {table}"
        " WHERE arxiv_id = ANY(%s::text[])",
        [wanted],
    )
    return {arxiv_id: (pk, version) for arxiv_id, pk, version in rows}


def _bound(sql: str, params: Sequence[object]) -> list[tuple[Any, ...]]:
    """Run ``sql`` in the current transaction with its parameters sent apart from it, in
    binary (PostgreSQL binds them), rather than quoted into its text as Django's cursors do:
    quoting a batch's abstracts and ids into array literals cost the importing process more
    than all else it does. Never prepared: behind a transaction-mode pooler the next
    statement may reach another server connection."""
    connection.ensure_connection()
    started = time.monotonic()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=False, binary=True)
        rows = cursor.fetchall() if cursor.description else []
    if connection.queries_logged:
        connection.queries_log.append(
            {"sql": f"{sql} -- bound", "time": f"{time.monotonic() - started:.3f}"}
        )
    return rows


def store_entries(
    *,
    entries: Iterable[ParsedRecord],
    categories: Mapping[str, int],
    listables: Iterable[Listable] = (),
    known: Mapping[str, tuple[int, int]] | None = None,
    made: Mapping[str, dict[str, Any]] | None = None,
    days: Mapping[str, dt.date] | None = None,
) -> Stored:
    """Store the entries (inside the caller's transaction) and list each, and each of the
    ``listables`` (stored papers whose record was not parsed in full), in those of its
    categories that are among ``categories`` (code → category id). ``known``: what
    ``stored_versions`` said of them, if the caller has just asked (in this transaction).
    ``made``: ``new_paper`` of some entries, by arXiv id, if the caller has made them already;
    ``days``: their listing days, likewise."""
    newest: dict[str, ParsedRecord] = {}
    for entry in entries:
        seen = newest.get(entry.arxiv_id)
        if seen is None or entry.version > seen.version:
            newest[entry.arxiv_id] = entry
    listables = list(listables)
    try:
        # A savepoint: a daily ingest may create one of these papers meanwhile (the unique
        # arxiv_id refuses ours); the second attempt finds it stored and updates it instead.
        with transaction.atomic():
            return _store(newest, listables, categories, known, made or {}, days or {})
    except IntegrityError:
        return _store(newest, listables, categories, None, made or {}, days or {})


def _store(
    newest: Mapping[str, ParsedRecord],
    listables: list[Listable],
    categories: Mapping[str, int],
    known: Mapping[str, tuple[int, int]] | None,
    made: Mapping[str, dict[str, Any]],
    days: Mapping[str, dt.date],
) -> Stored:
    stored = Stored()
    if known is None:
        known = stored_versions([*newest, *(listable.arxiv_id for listable in listables)])
    keys = {arxiv_id: pk for arxiv_id, (pk, _) in known.items()}
    new: list[dict[str, Any]] = []
    for arxiv_id in sorted(newest.keys() - known.keys()):
        paper = made.get(arxiv_id)
        if paper is None or paper["version"] != newest[arxiv_id].version:
            paper = new_paper(newest[arxiv_id])
        new.append(paper)
    for paper, pk in zip(new, _new_keys(len(new)), strict=True):
        paper["id"] = keys[paper["arxiv_id"]] = pk
    versions = [
        (paper["id"], paper["version"], paper["title"], paper["abstract"], paper["updated_at"])
        for paper in new
    ]
    outdated = sorted(
        a for a, (_, version) in known.items() if a in newest and version < newest[a].version
    )
    if outdated:
        stored.papers_updated, replaced = _update(outdated, newest)
        versions += replaced
    _insert_versions(versions)
    rows: list[tuple[int, int, dt.date, str]] = []
    for listable in [
        *(
            Listable(e.arxiv_id, e.categories, e.submitted_at, days.get(e.arxiv_id))
            for e in newest.values()
            if e.submitted_at
        ),
        *listables,
    ]:
        day = listable.day or listing_day(listable.submitted_at)
        primary = listable.categories[0]
        for code in dict.fromkeys(listable.categories):
            if code in categories and listable.arxiv_id in keys:
                kind = "new" if code == primary else "cross"
                rows.append((categories[code], keys[listable.arxiv_id], day, kind))
    listed = _list(rows)
    stored.listings_created = len(listed)
    stored.months = {day.replace(day=1) for day in listed}
    _copy_papers(new)
    stored.papers_created = len(new)
    return stored


def _new_keys(count: int) -> list[int]:
    if not count:
        return []
    table = Paper._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [table, count],
        )
        return [row[0] for row in cursor.fetchall()]


# The columns a COPY writes (all but the generated one), and those the store sets itself.
_COPIED = [field.attname for field in Paper._meta.concrete_fields if not field.generated]
_AUTOMATIC = {"id", "created_at", "modified_at", "stamp"}


def _copy_papers(papers: list[dict[str, Any]]) -> None:
    """COPY the new papers (``new_paper``'s columns and their keys). Values are prepared here
    rather than by each field's get_db_prep_save (a third of the import's Python time at a
    million papers): the columns are plain text, numbers, times, booleans and JSON."""
    if not papers:
        return
    quote = connection.ops.quote_name
    fields = {field.attname: field for field in Paper._meta.concrete_fields}
    now = timezone.now()
    automatic = {"created_at": now, "modified_at": now, "stamp": 0}
    is_json = [isinstance(fields[name], models.JSONField) for name in _COPIED]
    sql = (
        f"COPY {quote(Paper._meta.db_table)} "
        f"({', '.join(quote(fields[name].column) for name in _COPIED)}) FROM STDIN"
    )
    started = time.monotonic()
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(sql) as copy,
    ):
        for values in papers:
            copy.write_row(
                [
                    automatic[name]
                    if name in automatic
                    else json.dumps(values[name])
                    if json_field
                    else values[name]
                    for name, json_field in zip(_COPIED, is_json, strict=True)
                ]
            )
    if connection.queries_logged:
        connection.queries_log.append(
            {"sql": f"{sql} -- {len(papers)} rows", "time": f"{time.monotonic() - started:.3f}"}
        )


def _insert_versions(rows: list[tuple[int, int, str, str, dt.datetime | None]]) -> None:
    """(paper id, number, title, abstract, submitted at); one already stored is kept."""
    if not rows:
        return
    table = connection.ops.quote_name(PaperVersion._meta.db_table)
    _bound(
        f"INSERT INTO {table} (paper_id, number, title, abstract, submitted_at, seen_at)"  # noqa: S608 - the table name only
        " SELECT * , now() FROM unnest(%s::bigint[], %s::integer[], %s::text[], %s::text[],"
        " %s::timestamptz[]) ON CONFLICT (paper_id, number) DO NOTHING",
        [[row[i] for row in rows] for i in range(5)],
    )


def _update(arxiv_ids: list[str], newest: Mapping[str, ParsedRecord]) -> tuple[int, list]:
    """Bring stored papers up to a newer version, as the daily feed's replacement does,
    keeping the text being replaced as a version of its own."""
    papers = list(Paper.objects.select_for_update().filter(arxiv_id__in=arxiv_ids).order_by("pk"))
    versions = []
    fields: set[str] = set()
    now = timezone.now()
    for paper in papers:
        versions.append((paper.pk, paper.version, paper.title, paper.abstract, None))
        before = {name: getattr(paper, name) for name in WRITTEN_FIELDS}
        apply_entry(paper, newest[paper.arxiv_id])
        if paper.tex_changed():
            paper.typeset()
        fields.update(name for name in WRITTEN_FIELDS if before[name] != getattr(paper, name))
        paper.modified_at = now
        versions.append((paper.pk, paper.version, paper.title, paper.abstract, paper.updated_at))
    Paper.objects.bulk_update(papers, [*sorted(fields), "modified_at"])
    return len(papers), versions


def _list(rows: list[tuple[int, int, dt.date, str]]) -> list[dt.date]:
    """Insert the approximate listings (category id, paper id, day, type) in one statement;
    returns the days of those that were new.

    A listing is left out where the paper already has one in the category's stream (the
    daily feed's, exact, or an earlier import's) and on any day a feed or backfill of that
    category was ingested: those days are as arXiv announced them, and stay so.
    """
    if not rows:
        return []
    quote = connection.ops.quote_name
    listing, run = quote(Listing._meta.db_table), quote(IngestRun._meta.db_table)
    created = _bound(
        f"INSERT INTO {listing} (category_id, paper_id, date, announce_type, version,"  # noqa: S608 - table names only
        " approximate)"
        " SELECT r.c, r.p, r.d, r.t, 1, true"
        " FROM unnest(%s::bigint[], %s::bigint[], %s::date[], %s::text[]) AS r(c, p, d, t)"
        f" WHERE NOT EXISTS (SELECT 1 FROM {listing} AS l WHERE l.category_id = r.c"
        " AND l.paper_id = r.p AND l.announce_type = ANY(%s::text[]))"
        f" AND NOT EXISTS (SELECT 1 FROM {run} AS i WHERE i.category_id = r.c"
        " AND i.date = r.d AND i.status = %s::text)"
        " ON CONFLICT (category_id, paper_id, date) DO NOTHING RETURNING date",
        [
            [row[0] for row in rows],
            [row[1] for row in rows],
            [row[2] for row in rows],
            [row[3] for row in rows],
            [str(kind) for kind in Listing.STREAM_TYPES],
            str(IngestRun.Status.SUCCEEDED),
        ],
    )
    return [row[0] for row in created]
