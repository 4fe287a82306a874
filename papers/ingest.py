"""Store what arXiv announced: the write, and one ingest at a time per category.

Reading arXiv (fetching, parsing, enriching) lives in ``papers.arxiv``; this module takes its
``ParsedFeed`` and writes it:

- ``ingest_feed`` stores one parsed feed in one transaction and records an ``IngestRun``;
- ``ingest_category`` chains fetch (or read a file) → parse → enrich → write for one category;
- ``ingest_lock`` keeps two workers from ingesting one category at once;
- ``typeset_paper`` renders a paper's TeX, shared with the ``retypeset`` command.

After a feed's transaction commits, ``papers.signals.listings_announced`` is sent once per listing
date: later apps (the market's dividends) listen there, so this module imports none of them.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, models, transaction
from django.utils import timezone

from papers import leases
from papers.arxiv.api import parse_api
from papers.arxiv.client import fetch, too_large
from papers.arxiv.documents import parse_feed
from papers.arxiv.enrichment import enrich_or_fail, enrich_quietly, merge_found
from papers.arxiv.errors import FetchError, IngestError
from papers.arxiv.fields import clean
from papers.arxiv.records import ParsedFeed, ParsedRecord
from papers.models import Category, IngestRun, Listing, Paper, PaperVersion
from papers.signals import listings_announced

__all__ = ["FetchError", "IngestError", "ingest_category", "ingest_feed", "ingest_lock"]

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------
# Typesetting
# --------------------------------------------------------------------------------------------


def typeset_paper(paper: Paper) -> None:
    """Render the paper's TeX (title, abstract, author names) in memory; the caller saves.

    The model's own method, which save() (the admin) and `retypeset` use too, so every path
    renders the same way; ingest calls it itself because bulk writes bypass save().
    """
    paper.typeset()


def _typesetter_version() -> int:
    from papers import typesetting

    return int(typesetting.TYPESETTER_VERSION)


# --------------------------------------------------------------------------------------------
# The write
# --------------------------------------------------------------------------------------------

# The fields an ingest may change; anything else (hidden, created_at) belongs to people.
SOURCE_FIELDS = (
    "version",
    "title",
    "abstract",
    "authors",
    "more_authors",
    "primary_category",
    "categories",
    "comment",
    "journal_ref",
    "doi",
    "report_no",
    "license",
    "submitted_at",
    "updated_at",
    "version_dates",
)
WRITTEN_FIELDS = (
    *SOURCE_FIELDS,
    *(name for name in Paper.TYPESET_FIELDS if name not in SOURCE_FIELDS),
)


@dataclass
class _Counts:
    papers_created: int = 0
    papers_updated: int = 0
    listings_created: int = 0


def _authors_json(entry: ParsedRecord, previous: list[dict[str, str]]) -> list[dict[str, str]]:
    """Author dicts for the entry, keeping affiliations we knew when the feed omits them, and
    the renderings of what did not change (so an unchanged byline is not typeset again)."""
    old = previous if [a.get("name") for a in previous] == [a.name for a in entry.authors] else []
    authors = []
    for i, author in enumerate(entry.authors):
        known = old[i] if old else {}
        affiliation = author.affiliation or known.get("affiliation", "")
        same = affiliation == known.get("affiliation", "")
        authors.append(
            {
                "name": author.name,
                "name_text": known.get("name_text", ""),
                "affiliation": affiliation,
                "affiliation_text": known.get("affiliation_text", "") if same else "",
            }
        )
    return authors


def _apply(paper: Paper, entry: ParsedRecord) -> None:
    """Bring a paper up to date with an entry of the same or a newer version, in memory.

    Empty values in the entry never erase what we know (an unenriched re-run must not undo an
    enriched one); the text follows the entry, which is at least as new as what we have.
    """
    newer = entry.version > paper.version
    paper.version = entry.version
    paper.title = entry.title or paper.title
    # The feed and the API wrap the same abstract differently; for the same version only a real
    # change of words counts, so alternating sources cannot flip the row back and forth.
    if entry.abstract and (newer or clean(entry.abstract) != clean(paper.abstract)):
        paper.abstract = entry.abstract
    if entry.authors:
        paper.authors = _authors_json(entry, paper.authors)
        paper.more_authors = entry.more_authors
    if entry.categories:
        paper.categories = list(entry.categories)
        paper.primary_category = entry.primary_category
    fields = ("comment", "journal_ref", "doi", "report_no", "license", "submitted_at", "updated_at")
    for name in fields:
        value = getattr(entry, name)
        if value:
            setattr(paper, name, value)
    paper.date_versions(entry.dated_versions())
    paper.license = paper.license[:300]


def _snapshot(paper: Paper) -> dict[str, Any]:
    return {name: getattr(paper, name) for name in WRITTEN_FIELDS}


def _announce_type(entry: ParsedRecord, category: Category) -> str:
    if entry.announce_type:
        return entry.announce_type
    own = entry.primary_category == category.code
    first = (entry.listing_version or entry.version) == 1
    if first:
        return Listing.AnnounceType.NEW if own else Listing.AnnounceType.CROSS
    return Listing.AnnounceType.REPLACE if own else Listing.AnnounceType.REPLACE_CROSS


@dataclass
class _Plan:
    """What one feed does to the database, worked out in memory before anything is written.

    Keyed by arXiv id rather than primary key: new papers have no key until they are inserted.
    """

    papers: dict[str, Paper] = field(default_factory=dict)  # every paper the feed touches
    new: dict[str, Paper] = field(default_factory=dict)  # to insert, in feed order
    changed: dict[str, Paper] = field(default_factory=dict)  # already stored, to update
    changed_fields: set[str] = field(default_factory=set)
    # (arxiv id, number) → (title, abstract); inserted unless the version is already stored.
    versions: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)
    # (arxiv id, date) → (announce type, version), for the listings not already stored.
    listings: dict[tuple[str, dt.date], tuple[str, int]] = field(default_factory=dict)
    counts: _Counts = field(default_factory=_Counts)
    dates: set[dt.date] = field(default_factory=set)
    unlisted: int = 0  # entries stored but not listed: the category is not among theirs
    # Bulk history's approximate listings (papers.history) of papers this feed lists in the
    # stream: the feed knows their day, so they make way for its exact listing.
    superseded: list[int] = field(default_factory=list)


def plan_feed(*, category: Category, parsed: ParsedFeed, typesetter_version: int) -> _Plan:
    """Lock the feed's stored papers and work out every change, in memory, in feed order.

    A constant number of queries whatever the feed's size: the papers, their versions and this
    category's listings of them are each read in one query.
    """
    plan = _Plan()
    dates = {entry.announced_on or parsed.date for entry in parsed.entries}
    if None in dates:
        raise IngestError(
            "The feed has no announcement date (no pubDate): pass the date explicitly."
        )
    ids = sorted({entry.arxiv_id for entry in parsed.entries})
    # Lock the papers we are about to change, in a fixed order (by arxiv_id) so that two feeds
    # sharing cross-listed papers cannot deadlock on each other.
    stored = {
        paper.arxiv_id: paper
        for paper in Paper.objects.select_for_update().filter(arxiv_id__in=ids).order_by("arxiv_id")
    }
    plan.papers.update(stored)
    known_versions: set[tuple[str, int]] = set()
    listed: set[tuple[str, dt.date]] = set()
    approximated: dict[str, list[int]] = {}
    if stored:
        arxiv_ids = {paper.pk: paper.arxiv_id for paper in stored.values()}
        known_versions = {
            (arxiv_ids[paper_id], number)
            for paper_id, number in PaperVersion.objects.filter(paper_id__in=arxiv_ids).values_list(
                "paper_id", "number"
            )
        }
        # In the same query: the papers' approximate listings from bulk history, any day.
        for paper_id, date, pk, approximate in (
            Listing.objects.filter(category=category, paper_id__in=arxiv_ids)
            .filter(models.Q(date__in=dates) | models.Q(approximate=True))
            .values_list("paper_id", "date", "pk", "approximate")
        ):
            if approximate:
                approximated.setdefault(arxiv_ids[paper_id], []).append(pk)
            else:
                listed.add((arxiv_ids[paper_id], date))

    for entry in parsed.entries:
        listing_date = entry.announced_on or parsed.date
        # A feed without one date (an API response over several days) dates every entry.
        assert listing_date is not None, entry.arxiv_id
        arxiv_id = entry.arxiv_id
        paper = plan.papers.get(arxiv_id)
        if paper is None:
            paper = Paper(arxiv_id=arxiv_id)
            _apply(paper, entry)
            typeset_paper(paper)
            plan.papers[arxiv_id] = plan.new[arxiv_id] = paper
        elif entry.version >= paper.version:
            if entry.version > paper.version and (arxiv_id, paper.version) not in known_versions:
                # Keep the text being replaced, even for a paper whose versions we never recorded.
                plan.versions[(arxiv_id, paper.version)] = (paper.title, paper.abstract)
                known_versions.add((arxiv_id, paper.version))
            before = _snapshot(paper)
            _apply(paper, entry)
            source_changed = any(
                before[name] != getattr(paper, name) for name in ("title", "abstract", "authors")
            )
            if source_changed or paper.typesetter_version < typesetter_version:
                typeset_paper(paper)
            changed = [name for name in WRITTEN_FIELDS if before[name] != getattr(paper, name)]
            if changed and arxiv_id not in plan.new:
                plan.changed[arxiv_id] = paper
                plan.changed_fields.update(changed)
                plan.counts.papers_updated += 1
        # An older version than the current one (a backfill, an old feed) changes nothing on the
        # paper, but its text is still one of the versions we have seen.

        if (arxiv_id, entry.version) not in known_versions:
            plan.versions[(arxiv_id, entry.version)] = (
                entry.title or paper.title,
                entry.abstract,
            )
            known_versions.add((arxiv_id, entry.version))

        if category.code not in entry.categories:
            # The API's answer for a category can include papers that are not in it (seen: 13
            # of 100 for cs.SE). The paper is stored, but listed only where it belongs.
            plan.unlisted += 1
            continue
        plan.dates.add(listing_date)
        if (arxiv_id, listing_date) not in listed:
            announce_type = _announce_type(entry, category)
            plan.listings[(arxiv_id, listing_date)] = (
                announce_type,
                entry.listing_version or entry.version,
            )
            listed.add((arxiv_id, listing_date))
            if announce_type in Listing.STREAM_TYPES:
                plan.superseded += approximated.pop(arxiv_id, [])
    if plan.unlisted:
        logger.warning(
            "%d of %d entries are not in %s: stored, not listed there",
            plan.unlisted,
            len(parsed.entries),
            category.code,
        )
    plan.counts.papers_created = len(plan.new)
    plan.counts.listings_created = len(plan.listings)
    return plan


def _insert_papers(papers: list[Paper]) -> None:
    """Insert new papers, in the given order, and set their primary keys.

    On Postgres through COPY: a day's papers are megabytes of TeX and MathML, full of the
    backslashes and quotes that a bulk INSERT has psycopg escape in Python and the server parse
    back out of one huge statement; COPY streams the rows instead (about 3x faster on 2,000
    papers). The values are prepared by the fields themselves, exactly as for an INSERT
    (auto_now and JSON included); the keys are then read back in one query. A unique violation
    (the cross-list race) surfaces as an IntegrityError, as an INSERT's would.
    """
    quote = connection.ops.quote_name
    # Generated columns (the search vector) are PostgreSQL's to compute: COPY refuses them.
    fields = [
        field
        for field in Paper._meta.concrete_fields
        if not field.primary_key and not field.generated
    ]
    sql = (
        f"COPY {quote(Paper._meta.db_table)} "
        f"({', '.join(quote(field.column) for field in fields)}) FROM STDIN"
    )
    started = time.monotonic()
    with (
        connection.cursor() as cursor,
        connection.wrap_database_errors,
        cursor.cursor.copy(sql) as copy,
    ):
        for paper in papers:
            copy.write_row(
                [
                    field.get_db_prep_save(field.pre_save(paper, True), connection)
                    for field in fields
                ]
            )
    if connection.queries_logged:
        # COPY bypasses Django's cursor wrapper: log it like any query, so that DEBUG pages and
        # the tests' query budgets see it.
        connection.queries_log.append(
            {"sql": f"{sql} -- {len(papers)} rows", "time": f"{time.monotonic() - started:.3f}"}
        )
    keys = dict(
        Paper.objects.filter(arxiv_id__in=[paper.arxiv_id for paper in papers]).values_list(
            "arxiv_id", "pk"
        )
    )
    for paper in papers:
        paper.pk = keys[paper.arxiv_id]
        paper._state.adding = False
        paper._state.db = connection.alias


# A lost race on a new paper costs a re-plan; more than a couple in a row means something else.
_PLAN_ATTEMPTS = 3


def _write(*, category: Category, parsed: ParsedFeed) -> tuple[_Counts, set[dt.date]]:
    """Store the feed with a constant number of queries: plan in memory, then write in bulk."""
    if not parsed.entries:
        return _Counts(), set()
    typesetter_version = _typesetter_version()
    for attempt in range(1, _PLAN_ATTEMPTS + 1):
        plan = plan_feed(category=category, parsed=parsed, typesetter_version=typesetter_version)
        if not plan.new:
            break
        try:
            # One savepoint for the whole feed (not one per paper): if another category's
            # ingest has just created one of our new papers (a cross-list), the insert fails
            # without poisoning the feed's transaction, and the next plan locks that paper and
            # updates it like any stored one. Inserted in arxiv_id order, like the locks: two
            # feeds inserting the same new papers then queue on the first one they share
            # instead of each holding one the other needs.
            with transaction.atomic():
                _insert_papers(sorted(plan.new.values(), key=lambda p: p.arxiv_id))
            break
        except IntegrityError:
            raced = Paper.objects.filter(arxiv_id__in=list(plan.new)).exists()
            if attempt == _PLAN_ATTEMPTS or not raced:
                raise

    if plan.changed:
        # Only the fields that changed (in any of the papers), like save(update_fields=...):
        # people's fields (hidden) are never written, and a re-run of the same feed, which
        # changes nothing, writes nothing. bulk_update bypasses auto_now: set modified_at here.
        now = timezone.now()
        for paper in plan.changed.values():
            paper.modified_at = now
        fields = [name for name in WRITTEN_FIELDS if name in plan.changed_fields]
        Paper.objects.bulk_update(plan.changed.values(), [*fields, "modified_at"])
    if plan.versions:
        # ignore_conflicts: a version stored meanwhile (a concurrent ingest) is kept as it is,
        # exactly like get_or_create would.
        PaperVersion.objects.bulk_create(
            [
                PaperVersion(
                    paper_id=plan.papers[arxiv_id].pk, number=number, title=title, abstract=abstract
                )
                for (arxiv_id, number), (title, abstract) in plan.versions.items()
            ],
            ignore_conflicts=True,
        )
    _date_versions(plan.papers.values())
    if plan.superseded:
        # Before the insert: an approximate listing may sit on the very day the feed gives.
        Listing.objects.filter(pk__in=plan.superseded).delete()
    if plan.listings:
        # The unique constraint (category, paper, date) keeps a re-run idempotent even against
        # a concurrent ingest of the same category (which the ingest lock normally prevents).
        Listing.objects.bulk_create(
            [
                Listing(
                    category=category,
                    paper_id=plan.papers[arxiv_id].pk,
                    date=date,
                    announce_type=announce_type,
                    version=version,
                )
                for (arxiv_id, date), (announce_type, version) in plan.listings.items()
            ],
            ignore_conflicts=True,
        )
    return plan.counts, plan.dates


def _date_versions(papers) -> None:
    """Date the stored versions the sources date: the first version by the paper's first
    submission, the current one by its last revision, and any other the paper knows the
    date of. One statement for the feed, and it writes only the rows whose date is missing or
    differs, so a re-run writes nothing (and moves no stamp)."""
    rows: list[tuple[int, int, dt.datetime]] = []
    for paper in papers:
        dated = paper.dated_versions()
        if paper.submitted_at is not None:
            dated.setdefault(1, paper.submitted_at)
        if paper.updated_at is not None and paper.version > 1:
            dated.setdefault(paper.version, paper.updated_at)
        rows.extend((paper.pk, number, at) for number, at in sorted(dated.items()))
    if not rows:
        return
    table = connection.ops.quote_name(PaperVersion._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS v SET submitted_at = d.at"  # noqa: S608 - the table name only
            " FROM unnest(%s::bigint[], %s::integer[], %s::timestamptz[]) AS d(paper, n, at)"
            " WHERE v.paper_id = d.paper AND v.number = d.n"
            " AND v.submitted_at IS DISTINCT FROM d.at",
            [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]],
        )


def _announce(*, category: Category, date: dt.date) -> None:
    """Tell later apps that `category`'s listings of `date` are stored.

    Robustly: the listings are committed by then, so a receiver's failure is logged rather than
    reported as a failed ingest, and does not keep the other receivers from running (they are
    idempotent and can be re-run).
    """
    for receiver, result in listings_announced.send_robust(
        sender=Category, category=category, date=date
    ):
        if isinstance(result, Exception):
            logger.error(
                "A listings_announced receiver (%s) failed for %s %s",
                getattr(receiver, "__qualname__", receiver),
                category.code,
                date,
                exc_info=result,
            )


def record_failure(run: IngestRun, exc: BaseException) -> None:
    """Close ``run`` as failed with what went wrong, and nothing counted as stored."""
    run.status = IngestRun.Status.FAILED
    run.error = str(exc) or type(exc).__name__
    run.finished_at = timezone.now()
    run.items = run.papers_created = run.papers_updated = run.listings_created = 0
    run.save()


class _AlreadyStored(Exception):
    """The feed's day was stored by ``run`` meanwhile: this transaction is rolled back."""

    def __init__(self, run: IngestRun) -> None:
        super().__init__(run.pk)
        self.run = run


def ingest_feed(
    *,
    category: Category,
    parsed: ParsedFeed,
    source: str,
    run: IngestRun | None = None,
    once_per_day: bool = False,
) -> IngestRun:
    """Store one parsed feed: papers, versions, listings, in ONE transaction.

    Returns the succeeded `IngestRun`. On any failure nothing of the feed is written, the run
    (created before the transaction, so it survives the rollback) is marked failed with the
    reason, and `IngestError` is raised. Re-running the same feed creates and changes nothing.
    After the commit, `listings_announced` is sent once per listing date of the feed.

    ``once_per_day`` (the daily pipeline's ingests): if a run from the same ``source`` has
    stored the feed's day by the time this one would commit, this one's writes are rolled back,
    its run is deleted and that one returned, so a day has exactly one run however many
    ingests of it were sent (``ingested_day``).
    """
    if run is None:
        run = IngestRun.objects.create(category=category, source=source[:500], date=parsed.date)
    try:
        if parsed.category and parsed.category != category.code:
            raise IngestError(f"The feed is for {parsed.category}, not {category.code}.")
        with transaction.atomic():
            counts, dates = _write(category=category, parsed=parsed)
            if once_per_day and parsed.date is not None:
                # Asked last, after the writes: the category's row is then locked in the order
                # the stamp triggers lock it (papers, then the categories listing them), so two
                # categories' ingests updating a shared paper cannot deadlock on it.
                earlier = IngestRun.objects.ingested_day(
                    category=category, date=parsed.date, source=source
                )
                if earlier is not None:
                    raise _AlreadyStored(earlier)  # rolls this feed's writes back
            run.date = parsed.date or (min(dates) if len(dates) == 1 else run.date)
            run.items = len(parsed.entries)
            run.papers_created = counts.papers_created
            run.papers_updated = counts.papers_updated
            run.listings_created = counts.listings_created
            run.status = IngestRun.Status.SUCCEEDED
            run.error = ""
            run.finished_at = timezone.now()
            # Saved inside the transaction: the data and "succeeded" commit together or not at all.
            run.save()
            for day in sorted(dates):
                # After the commit, so that receivers (the market pays the day's dividends) see
                # the listings; never for a rolled-back feed.
                transaction.on_commit(partial(_announce, category=category, date=day))
    except _AlreadyStored as already:
        run.delete()
        logger.info(
            "Not storing %s %s again: run %d did", category.code, parsed.date, already.run.pk
        )
        return already.run
    except Exception as exc:
        if isinstance(exc, IngestError):
            record_failure(run, exc)
            raise
        error = IngestError(f"Storing the feed failed: {exc}")
        record_failure(run, error)
        raise error from exc
    logger.info(
        "Ingested %s %s: %d items, %d papers created, %d updated, %d listings created",
        category.code,
        run.date,
        run.items,
        run.papers_created,
        run.papers_updated,
        run.listings_created,
    )
    return run


def _read(file: str | Path) -> bytes:
    try:
        size = Path(file).stat().st_size
        if size > settings.ARXIV_MAX_FEED_BYTES:
            raise too_large(str(file), f"{size:,} bytes")
        return Path(file).read_bytes()
    except OSError as exc:
        raise IngestError(f"Cannot read {file}: {exc.strerror or exc}") from exc


def ingest_category(
    *,
    category: Category,
    file: str | Path | None = None,
    date: dt.date | None = None,
    enrich: bool | None = None,
    enrich_file: str | Path | None = None,
    once_per_day: bool = False,
    listed_on: dt.date | None = None,
) -> IngestRun:
    """Fetch (or read `file`), parse, enrich and store a category's feed; returns the run
    (with `once_per_day`, the day's earlier run from the same source if there is one:
    `ingest_feed`).

    `enrich`: None (the default) completes a fetched feed from the arXiv API when it can (a
    nicety: if the API fails, the feed is stored as it is) unless ARXIV_ENRICH is off, and
    never a file, which is read offline; True completes either, and fails the ingest if the API
    cannot be reached, since it was asked for; False never. `enrich_file`: an arXiv API answer
    saved in a file, which completes the feed offline the same way (the bundled sample).
    `listed_on`: list a one-day feed on this day instead of its own, its papers' submission
    and update times moved by as many days (the bundled sample, moved to end on today's
    listing so that a fresh local site looks like a live day: `load_sample`).

    Every failure (network, parse, write) leaves a failed `IngestRun` and raises `IngestError`
    (`FetchError` when retrying later may help).
    """
    if file is not None:
        source = str(file)
    else:
        source = settings.ARXIV_RSS_URL.format(category=category.code)
    run = IngestRun.objects.create(category=category, source=source[:500], date=date)
    try:
        content = _read(file) if file is not None else fetch(source)
        parsed = parse_feed(content, date=date)
        if enrich_file is not None:
            merge_found(parsed, parse_api(_read(enrich_file)).entries)
        if enrich:
            enrich_or_fail(parsed)
        if listed_on is not None:
            _move_day(parsed, to=listed_on)
    except Exception as exc:
        record_failure(run, exc)
        raise
    if enrich is None and file is None and settings.ARXIV_ENRICH:
        enrich_quietly(parsed)
    return ingest_feed(
        category=category, parsed=parsed, source=source, run=run, once_per_day=once_per_day
    )


def _move_day(parsed: ParsedFeed, *, to: dt.date) -> None:
    if parsed.date is None or any(entry.announced_on for entry in parsed.entries):
        raise IngestError("Only a feed of one listing day can be listed on another day.")
    shift = to - parsed.date
    parsed.date = to
    parsed.entries = [
        replace(
            entry,
            submitted_at=entry.submitted_at and entry.submitted_at + shift,
            updated_at=entry.updated_at and entry.updated_at + shift,
            version_dates={number: at + shift for number, at in entry.version_dates.items()},
        )
        for entry in parsed.entries
    ]


# --------------------------------------------------------------------------------------------
# One ingest at a time per category
# --------------------------------------------------------------------------------------------


def ingest_lease_name(category_id: int) -> str:
    return f"ingest:{category_id}"


@contextmanager
def ingest_lock(category_id: int) -> Iterator[bool]:
    """Yield True if this process may ingest the category now, False if another one is.

    A lease (``papers.leases``): a row with an owner and an expiry, renewed while the ingest
    runs, taken and released in single statements. Not a session advisory lock: behind a
    transaction pooler its unlock would run on another server connection and the lock leak;
    not a transaction lock either: an ingest commits its own transactions and must not hold
    one open across minutes of network I/O. A worker that dies holding it stops renewing it,
    so the next run gets it ``INGEST_LEASE_SECONDS`` later at most.
    """
    with leases.held(
        name=ingest_lease_name(category_id), seconds=settings.INGEST_LEASE_SECONDS
    ) as lease:
        yield lease is not None


# Bulk history (papers.history.store) writes through the same two steps as a feed.
apply_entry = _apply
insert_papers = _insert_papers
