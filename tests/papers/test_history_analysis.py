"""Both bulk imports keep the planner's statistics up as they grow the tables: plans made
while a table was small go on scanning it whole once it is big (``papers.history.analysis``)."""

from __future__ import annotations

import pytest
from django.db import connection

from papers.history import analysis
from papers.history.oai import PageDone, harvest
from papers.history.snapshot import Progress, import_snapshot
from papers.models import Paper
from tests.papers.test_history import SNAPSHOT, categories, oai  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def analyses_of_papers() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT pg_stat_get_analyze_count('papers_paper'::regclass)")
        return cursor.fetchone()[0]


@pytest.fixture
def analyzed_from_one(monkeypatch):
    """Statistics brought up to date from the first paper, not the 20,000th."""
    monkeypatch.setattr(analysis, "REANALYZE_FROM", 1)
    return analyses_of_papers()


def test_a_snapshot_import_analyzes_each_time_the_papers_double(categories, analyzed_from_one):  # noqa: F811
    seen: list[tuple[int, int]] = []

    def note(progress: Progress) -> None:
        seen.append((Paper.objects.count(), analyses_of_papers() - analyzed_from_one))

    import_snapshot(path=SNAPSHOT, categories=categories, workers=0, batch=1, on_progress=note)

    # Analyzed at 1 paper, at 2, not at 3 (grown by one since 2), at 4.
    assert seen[:-1] == [(1, 1), (2, 2), (3, 2), (4, 3)]
    # And once more at the end, for the pages that read the finished tables.
    assert analyses_of_papers() - analyzed_from_one == 4


def test_a_harvest_analyzes_as_it_grows(categories, oai, sleeps, analyzed_from_one):  # noqa: F811
    seen: list[tuple[int, int]] = []

    def note(page: PageDone) -> None:
        seen.append((Paper.objects.count(), analyses_of_papers() - analyzed_from_one))

    harvest(set_spec="cs", categories=categories, on_page=note)

    assert seen == [(2, 1), (4, 2)]
