"""The one write path of bulk history: papers by COPY, typeset, and approximate listings.

``store_entries`` writes one batch; the caller holds the transaction, so that a batch and the
note of how far the source has been read commit together (what makes an import resumable).
Re-storing a batch changes nothing: a stored paper is only touched by a newer version, and a
listing is only added where the paper has none in the category's stream.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from papers.arxiv.records import ParsedEntry
from papers.calendar import announcement_date_for
from papers.ingest import WRITTEN_FIELDS, apply_entry, insert_papers
from papers.models import IngestRun, Listing, Paper, PaperVersion


@dataclass
class Stored:
    papers_created: int = 0
    papers_updated: int = 0
    listings_created: int = 0

    def add(self, other: Stored) -> None:
        self.papers_created += other.papers_created
        self.papers_updated += other.papers_updated
        self.listings_created += other.listings_created


def listing_day(entry: ParsedEntry) -> dt.date:
    """The day a paper was (most likely) first listed: from v1's submission, holidays kept."""
    assert entry.submitted_at is not None, entry.arxiv_id  # records always date v1
    return announcement_date_for(entry.submitted_at, holidays=True)


def wanted(entry: ParsedEntry, *, codes: Iterable[str]) -> bool:
    return not set(entry.categories).isdisjoint(codes)


def store_entries(*, entries: Iterable[ParsedEntry], categories: Mapping[str, int]) -> Stored:
    """Store the entries (inside the caller's transaction) and list each in those of its
    categories that are among ``categories`` (code → category id)."""
    newest: dict[str, ParsedEntry] = {}
    for entry in entries:
        seen = newest.get(entry.arxiv_id)
        if seen is None or entry.version > seen.version:
            newest[entry.arxiv_id] = entry
    if not newest:
        return Stored()
    try:
        # A savepoint: a daily ingest may create one of these papers meanwhile (the unique
        # arxiv_id refuses ours); the second attempt finds it stored and updates it instead.
        with transaction.atomic():
            stored, keys = _store_papers(newest)
    except IntegrityError:
        stored, keys = _store_papers(newest)
    stored.listings_created = _list(newest.values(), keys=keys, categories=categories)
    return stored


def _store_papers(newest: Mapping[str, ParsedEntry]) -> tuple[Stored, dict[str, int]]:
    stored = Stored()
    known = {
        arxiv_id: (pk, version)
        for arxiv_id, pk, version in Paper.objects.filter(arxiv_id__in=list(newest)).values_list(
            "arxiv_id", "pk", "version"
        )
    }
    keys = {arxiv_id: pk for arxiv_id, (pk, _) in known.items()}
    new: list[Paper] = []
    for arxiv_id in sorted(newest.keys() - known.keys()):
        paper = Paper(arxiv_id=arxiv_id)
        apply_entry(paper, newest[arxiv_id])
        paper.typeset()
        new.append(paper)
    if new:
        insert_papers(new)
        keys.update((paper.arxiv_id, paper.pk) for paper in new)
    stored.papers_created = len(new)
    versions = [
        PaperVersion(
            paper_id=paper.pk,
            number=paper.version,
            title=paper.title,
            abstract=paper.abstract,
            submitted_at=paper.updated_at,
        )
        for paper in new
    ]
    outdated = sorted(a for a, (_, version) in known.items() if version < newest[a].version)
    if outdated:
        stored.papers_updated, replaced = _update(outdated, newest)
        versions += replaced
    if versions:
        PaperVersion.objects.bulk_create(versions, ignore_conflicts=True)
    return stored, keys


def _update(arxiv_ids: list[str], newest: Mapping[str, ParsedEntry]) -> tuple[int, list]:
    """Bring stored papers up to a newer version, as the daily feed's replacement does,
    keeping the text being replaced as a version of its own."""
    papers = list(Paper.objects.select_for_update().filter(arxiv_id__in=arxiv_ids).order_by("pk"))
    versions = []
    fields: set[str] = set()
    now = timezone.now()
    for paper in papers:
        versions.append(
            PaperVersion(
                paper_id=paper.pk, number=paper.version, title=paper.title, abstract=paper.abstract
            )
        )
        before = {name: getattr(paper, name) for name in WRITTEN_FIELDS}
        apply_entry(paper, newest[paper.arxiv_id])
        if paper.tex_changed():
            paper.typeset()
        fields.update(name for name in WRITTEN_FIELDS if before[name] != getattr(paper, name))
        paper.modified_at = now
        versions.append(
            PaperVersion(
                paper_id=paper.pk,
                number=paper.version,
                title=paper.title,
                abstract=paper.abstract,
                submitted_at=paper.updated_at,
            )
        )
    Paper.objects.bulk_update(papers, [*sorted(fields), "modified_at"])
    return len(papers), versions


def _list(entries: Iterable[ParsedEntry], *, keys: Mapping[str, int], categories) -> int:
    """Insert the approximate listings in one statement; returns how many were new.

    A listing is left out where the paper already has one in the category's stream (the
    daily feed's, exact, or an earlier import's) and on any day a feed or backfill of that
    category was ingested: those days are as arXiv announced them, and stay so.
    """
    rows: list[tuple[int, int, dt.date, str]] = []
    for entry in entries:
        day = listing_day(entry)
        for code in dict.fromkeys(entry.categories):
            if code in categories:
                kind = Listing.AnnounceType.NEW if code == entry.primary_category else "cross"
                rows.append((categories[code], keys[entry.arxiv_id], day, str(kind)))
    if not rows:
        return 0
    quote = connection.ops.quote_name
    listing, run = quote(Listing._meta.db_table), quote(IngestRun._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {listing} (category_id, paper_id, date, announce_type, version,"  # noqa: S608 - table names only
            " approximate)"
            " SELECT r.c, r.p, r.d, r.t, 1, true"
            " FROM unnest(%s::bigint[], %s::bigint[], %s::date[], %s::text[]) AS r(c, p, d, t)"
            f" WHERE NOT EXISTS (SELECT 1 FROM {listing} AS l WHERE l.category_id = r.c"
            " AND l.paper_id = r.p AND l.announce_type = ANY(%s))"
            f" AND NOT EXISTS (SELECT 1 FROM {run} AS i WHERE i.category_id = r.c"
            " AND i.date = r.d AND i.status = %s)"
            " ON CONFLICT (category_id, paper_id, date) DO NOTHING",
            [
                [row[0] for row in rows],
                [row[1] for row in rows],
                [row[2] for row in rows],
                [row[3] for row in rows],
                [str(kind) for kind in Listing.STREAM_TYPES],
                str(IngestRun.Status.SUCCEEDED),
            ],
        )
        return cursor.rowcount
