"""The planner's statistics of the tables a bulk import grows: kept up as the import goes, and
brought up to date at its end (autovacuum may be off, or far behind an import's pace)."""

from __future__ import annotations

from django.db import connection
from django.db.models import Model

from papers.models import Authorship, CategoryDay, HistorySource, Listing, Paper, PaperVersion

REANALYZE_FROM = 20_000  # papers an import stores before the statistics are brought up to date


class Statistics:
    """Keeps the planner's statistics abreast of an import that multiplies the tables.

    Autovacuum may be off, or a long way behind, and the plans of a batch's statements are
    made from what the last ANALYZE saw. Planned from a nearly empty history, the listings'
    anti-join sorted the whole listings table at every batch, and the triggers' cached plans
    (kept for the session by PL/pgSQL) scanned the whole papers table: a second and more per
    batch by 340,000 papers, and a million took 31 minutes instead of 9. ANALYZE replaces
    those plans too, since new statistics invalidate every plan cached on the table. Each time
    the papers have doubled: six times from nothing to a million, each reading a sample of
    30,000 rows a table, not the table.
    """

    def __init__(self, source: HistorySource) -> None:
        self._source = source
        # At the last analysis (or at the start): the papers stored, and the source's count.
        self._stored = Paper.objects.count()
        self._created = source.papers_created

    def after_batch(self) -> None:
        """After a batch of ``source`` was committed."""
        grown = self._source.papers_created - self._created
        if grown >= max(REANALYZE_FROM, self._stored):
            with connection.cursor() as cursor:
                cursor.execute(
                    f"ANALYZE {_tables(Paper, PaperVersion, Listing, CategoryDay, Authorship)}"
                )
            self._stored += grown
            self._created = self._source.papers_created


def _tables(*models: type[Model]) -> str:
    return ", ".join(connection.ops.quote_name(model._meta.db_table) for model in models)


def analyze() -> None:
    """Bring the planner's statistics up to the tables' new size at once. A bulk import can
    multiply them before autovacuum's next look, and until then the planner, believing a
    category has a thousand listings where it has sixty thousand, joins them one by one.

    The tables that pages read by index-only scans (an author's page, a category's days and
    listings) are vacuumed too, outside a transaction: a scan skips the table only where a
    vacuum marked its pages all-visible, and until autovacuum's turn the most prolific
    author's page of a million-paper import read its 1,485 rows one by one (5.9 ms against
    0.9 ms). Those three tables are narrow: about a second at a million papers.
    """
    # With what the triggers of papers/sql/day_counts.sql and author_index.sql wrote for the new
    # papers and listings.
    analyzed = _tables(Paper, PaperVersion)
    scanned = _tables(Listing, CategoryDay, Authorship)
    with connection.cursor() as cursor:
        if connection.in_atomic_block:  # VACUUM cannot run in a transaction
            cursor.execute(f"ANALYZE {analyzed}, {scanned}")
        else:
            cursor.execute(f"ANALYZE {analyzed}")
            cursor.execute(f"VACUUM (ANALYZE) {scanned}")


__all__ = ["REANALYZE_FROM", "Statistics", "analyze"]
