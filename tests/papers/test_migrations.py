"""Data migrations of the papers app, run forwards on a database holding older rows."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def back_to_the_latest_schema():
    """Leave the database fully migrated: later tests need every migration, not the state
    this test stopped at."""
    yield
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())


def migrate(target: list[tuple[str, str]]):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)
    return executor.loader.project_state(target).apps


def test_old_ingest_runs_get_the_instant_their_day_was_announced():
    old = migrate([("papers", "0003_identifier_validators")])
    category, _ = old.get_model("papers", "Category").objects.get_or_create(
        code="cs.XX", name="Test", archive_code="cs", archive_name="Computer Science"
    )
    runs = old.get_model("papers", "IngestRun").objects
    # Monday 9 November's listing (announced Sunday) and one in summer time (EDT, UTC-4).
    monday = runs.create(category=category, date=dt.date(2026, 11, 9), source="old")
    summer = runs.create(category=category, date=dt.date(2026, 7, 1), source="old")
    undated = runs.create(category=category, date=None, source="old")

    new = migrate([("papers", "0004_ingestrun_announced_at")])
    runs = new.get_model("papers", "IngestRun").objects
    assert runs.get(pk=monday.pk).announced_at == dt.datetime(2026, 11, 9, 1, 0, tzinfo=dt.UTC)
    assert runs.get(pk=summer.pk).announced_at == dt.datetime(2026, 7, 1, 0, 0, tzinfo=dt.UTC)
    assert runs.get(pk=undated.pk).announced_at is None


def test_a_stored_et_al_author_is_dropped_from_the_byline_and_the_author_index():
    old = migrate([("papers", "0025_search_index_with_categories")])
    papers = old.get_model("papers", "Paper").objects
    byline = [
        {"name": "B. Aubert", "name_text": "B. Aubert", "affiliation": ""},
        {"name": "et al", "name_text": "et al", "affiliation": ""},
    ]
    cut = papers.create(
        arxiv_id="0704.0020",
        title="A collaboration's paper",
        authors=byline,
        authors_text="B. Aubert, et al",
        primary_category="hep-ex",
    )
    alone = papers.create(
        arxiv_id="0704.0021",
        title="Et Al's own paper",
        authors=[{"name": "Et Al", "name_text": "Et Al", "affiliation": ""}],
        authors_text="Et Al",
        primary_category="hep-ex",
    )
    authorship = old.get_model("papers", "Authorship").objects
    assert authorship.filter(paper_id=cut.pk, name="et al").exists()

    new = migrate([("papers", "0026_paper_fields")])
    papers = new.get_model("papers", "Paper").objects
    assert [a["name"] for a in papers.get(pk=cut.pk).authors] == ["B. Aubert"]
    assert papers.get(pk=cut.pk).authors_text == "B. Aubert"
    assert papers.get(pk=cut.pk).more_authors and not papers.get(pk=alone.pk).more_authors
    # A byline of one is a person, whatever their name.
    assert papers.get(pk=alone.pk).authors_text == "Et Al"
    # The author index's triggers follow: the byline's "et al" row is gone, the person's stays.
    authorship = new.get_model("papers", "Authorship").objects
    assert list(authorship.filter(name="et al").values_list("paper_id", flat=True)) == [alone.pk]
    assert authorship.filter(paper_id=cut.pk, name="b. aubert").exists()
