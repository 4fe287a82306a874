"""The papers' GIN index, set aside during a big import and built afresh when it finishes.

A GIN index takes a COPY's papers into its pending list and then merges them into the tree
entry by entry, and the table's search index (categories, words, title words) costs
PostgreSQL, once the table is large, about as much as the rows themselves. Built from the
finished table, it is one sort of all its entries. So an import that is going to multiply what
is stored (a first import of the history into a nearly empty site) drops it once it has read
enough to tell, and builds it again at its end; an import that adds little to what is stored
(a re-run, a month of history into a full site) keeps it. Meanwhile search still answers, by
scanning.

The definitions dropped are kept on the import's ``HistorySource`` in the drop's own
transaction (PostgreSQL's DDL is transactional), so an interrupted import rebuilds them when it
is resumed to its end.
"""

from __future__ import annotations

import logging
import re

from django.db import OperationalError, connection, transaction
from django.db.backends.utils import CursorWrapper

from papers.models import HistorySource, Paper

_log = logging.getLogger(__name__)

#: The indexes set aside: the papers' table's GIN index.
SET_ASIDE = ("paper_search",)

#: An import is worth the rebuild when it is projected to bring at least this many papers and
#: at least as many as are stored: the rebuild then reads at most twice what was imported.
MIN_PAPERS = 50_000

#: Decide once this many bytes of the file have been read (or at the first batch after): enough
#: lines to tell how many of them are new.
DECIDE_AFTER = 4 * 2**20

# What pg_get_indexdef says of one of ours: nothing else is ever executed from a stored row.
_DEFINITION = re.compile(r"CREATE INDEX (\w+) ON (?:\w+\.)?papers_paper USING gin \(.+\)\Z", re.S)


def worth_setting_aside(*, created: int, done: int, total: int) -> bool:
    """Whether an import that has created ``created`` papers in ``done`` bytes of a ``total``
    bytes file should set the indexes aside now."""
    if done <= 0 or created <= 0:
        return False
    projected = created * total // done
    if projected < MIN_PAPERS:
        return False
    stored_before = Paper.objects.count() - created
    return projected >= stored_before


def set_aside(source: HistorySource) -> bool:
    """Drop the indexes (those that exist), noting their definitions on ``source``; false if
    the table stayed busy (the import then keeps them)."""
    try:
        _drop(source)
    except OperationalError:  # lock_timeout
        source.refresh_from_db(fields=["dropped_indexes"])
        _log.warning("The papers' indexes were kept: the table stayed busy.")
        return False
    return True


def _drop(source: HistorySource) -> None:
    table = Paper._meta.db_table
    with transaction.atomic(), connection.cursor() as cursor:
        # A drop waits for the table to itself, and page reads queue behind it meanwhile: wait
        # no longer than a reader would bear.
        cursor.execute("SET LOCAL lock_timeout = '3s'")
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes"
            " WHERE schemaname = current_schema() AND tablename = %s AND indexname = ANY(%s)",
            [table, list(SET_ASIDE)],
        )
        found = dict(cursor.fetchall())
        _no_pending_checks(cursor)
        for name in found:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
        _deferred_checks(cursor)
        source.dropped_indexes = {**source.dropped_indexes, **found}
        source.save(update_fields=["dropped_indexes", "updated_at"])


def rebuild(source: HistorySource) -> None:
    """Build again the indexes ``source`` set aside, one transaction each (an interruption
    keeps those built)."""
    for name, definition in sorted(source.dropped_indexes.items()):
        match = _DEFINITION.match(definition)
        if name not in SET_ASIDE or match is None or match[1] != name:
            raise ValueError(f"Not an index definition to rebuild: {definition[:200]!r}")
        with transaction.atomic(), connection.cursor() as cursor:
            # One sort of all the entries in memory rather than runs spilled to disk; a
            # setting of this transaction only.
            cursor.execute("SET LOCAL maintenance_work_mem = '256MB'")
            _no_pending_checks(cursor)
            cursor.execute(definition.replace("CREATE INDEX ", "CREATE INDEX IF NOT EXISTS ", 1))
            _deferred_checks(cursor)
            source.dropped_indexes = {
                other: sql for other, sql in source.dropped_indexes.items() if other != name
            }
            source.save(update_fields=["dropped_indexes", "updated_at"])


def _no_pending_checks(cursor: CursorWrapper) -> None:
    # PostgreSQL alters no table with foreign key checks still deferred on it; there are
    # none after the import's own commits, only when a caller's transaction holds the
    # import (a test's): run them now...
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")


def _deferred_checks(cursor: CursorWrapper) -> None:
    # ...and defer them again, as Django declares them, for the rest of that transaction
    # (the store writes versions and listings before their papers).
    cursor.execute("SET CONSTRAINTS ALL DEFERRED")


class Plan:
    """When one run of an import sets the indexes aside: at once if told to (``wanted``
    True), never if told not to (False), else after its first ``DECIDE_AFTER`` bytes if it
    is worth it. Whatever was set aside, by this run or an interrupted one before, is rebuilt
    by ``finish``."""

    def __init__(self, source: HistorySource, *, wanted: bool | None, start: int, total: int):
        self.source = source
        self.start, self.total = start, total
        self.created_before = source.papers_created
        self.undecided = wanted is None and not source.dropped_indexes
        if wanted and not source.dropped_indexes:
            set_aside(source)

    def after_batch(self, *, done: int) -> None:
        """After a batch was stored, ``done`` bytes of the file read."""
        if not self.undecided or done - self.start < min(DECIDE_AFTER, self.total - self.start):
            return
        self.undecided = False
        created = self.source.papers_created - self.created_before
        if worth_setting_aside(
            created=created, done=done - self.start, total=self.total - self.start
        ):
            set_aside(self.source)

    def finish(self) -> None:
        if self.source.dropped_indexes:
            rebuild(self.source)


__all__ = ["MIN_PAPERS", "SET_ASIDE", "Plan", "rebuild", "set_aside", "worth_setting_aside"]
