"""A big snapshot import: records read and typeset by worker processes, the papers' search
indexes set aside and rebuilt. Whatever the way, the same papers, listings and search results
as the plain import; a worker that dies is reported and the import resumes."""

from __future__ import annotations

import io
import json
import os

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.urls import reverse

from papers.arxiv.errors import IngestError
from papers.history import indexes, pipeline
from papers.history import snapshot as snapshot_module
from papers.history.snapshot import Progress, import_snapshot
from papers.models import HistorySource, Paper
from tests.html import Page
from tests.papers.test_history import SNAPSHOT, categories, state  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db


def paper_indexes() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'papers_paper'"
            " AND indexname = ANY(%s)",
            [list(indexes.SET_ASIDE)],
        )
        return {row[0] for row in cursor.fetchall()}


def searched(client) -> dict[str, list[str]]:
    """What a reader finds for searches that each go through one of the set-aside indexes."""
    found = {}
    for q in ("consensus", "ti:federated", "Pérez", "network cat:cs.DC", "au:Knot"):
        response = client.get(reverse("papers:search"), {"q": q})
        assert response.status_code == 200
        found[q] = Page.of(response).ids("li", cls="paper")
    return found


def test_worker_processes_import_the_same_as_one_process(categories):  # noqa: F811
    import_snapshot(path=SNAPSHOT, categories=categories, workers=0)
    alone = state()
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()

    source = import_snapshot(path=SNAPSHOT, categories=categories, workers=2, batch=2)

    assert state() == alone
    assert (source.records, source.kept, source.malformed) == (7, 4, 2)
    assert source.malformed_at == [4, 7]
    again = import_snapshot(path=SNAPSHOT, categories=categories, workers=1)
    assert (again.papers_created, again.listings_created) == (0, 0)
    assert state() == alone


def test_a_paper_deleted_after_its_lines_were_sent_is_read_here(categories, monkeypatch):  # noqa: F811
    import_snapshot(path=SNAPSHOT, categories=categories)
    whole = state()
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()
    # Told, when their lines are sent, that every paper is stored at a late version: none is
    # read in full there, and the batch finds them not stored.
    monkeypatch.setattr(snapshot_module, "_stored", lambda arxiv_ids: dict.fromkeys(arxiv_ids, 99))

    source = import_snapshot(path=SNAPSHOT, categories=categories)

    assert state() == whole
    assert (source.papers_created, source.malformed_at) == (4, [4, 7])


def _dies_at_line_5(chunk, filters):
    if any(number == 5 for number, _ in chunk.lines):
        os._exit(3)  # as if killed: no exception, no result
    return _prepare(chunk, filters)


_prepare = pipeline.prepare


def test_a_worker_process_that_dies_is_reported_and_the_import_resumes(categories, monkeypatch):  # noqa: F811
    import_snapshot(path=SNAPSHOT, categories=categories)
    whole = state()
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()
    monkeypatch.setattr(pipeline, "prepare", _dies_at_line_5)  # the forked worker has it too

    with pytest.raises(IngestError, match="worker process .* stopped unexpectedly"):
        import_snapshot(path=SNAPSHOT, categories=categories, workers=1, batch=1)
    stopped = HistorySource.objects.get()
    assert stopped.finished_at is None and stopped.line < 5
    assert Paper.objects.count() == stopped.papers_created > 0

    monkeypatch.setattr(pipeline, "prepare", _prepare)
    resumed = import_snapshot(path=SNAPSHOT, categories=categories, workers=1, batch=1)

    assert state() == whole
    assert (resumed.records, resumed.kept, resumed.malformed) == (7, 4, 2)
    assert resumed.finished_at is not None


def test_the_command_reports_a_dead_worker(categories, monkeypatch):  # noqa: F811
    monkeypatch.setattr(pipeline, "prepare", _dies_at_line_5)
    with pytest.raises(CommandError, match="run the command again to resume"):
        call_command(
            "import_snapshot", str(SNAPSHOT), "--workers", "1", stdout=io.StringIO(),
            stderr=io.StringIO(),
        )  # fmt: skip
    with pytest.raises(CommandError, match="--workers cannot be negative"):
        call_command("import_snapshot", str(SNAPSHOT), "--workers", "-1")


def test_an_import_with_the_indexes_rebuilt_finds_the_same(client, categories):  # noqa: F811
    import_snapshot(path=SNAPSHOT, categories=categories, rebuild_indexes=False)
    kept = searched(client)
    assert kept["consensus"] == ["2401.00101"] and kept["au:Knot"] == []
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()

    source = import_snapshot(path=SNAPSHOT, categories=categories, rebuild_indexes=True)

    assert searched(client) == kept
    assert paper_indexes() == set(indexes.SET_ASIDE)
    assert source.dropped_indexes == {}


def test_an_interrupted_import_rebuilds_the_indexes_when_it_resumes(client, categories):  # noqa: F811
    import_snapshot(path=SNAPSHOT, categories=categories, rebuild_indexes=False)
    kept = searched(client)
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()

    def stop(progress: Progress) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_snapshot(
            path=SNAPSHOT, categories=categories, batch=1, rebuild_indexes=True, on_progress=stop
        )
    assert paper_indexes() == set()
    assert set(HistorySource.objects.get().dropped_indexes) == set(indexes.SET_ASIDE)
    # Search still answers meanwhile, by scanning.
    assert client.get(reverse("papers:search"), {"q": "consensus"}).status_code == 200

    # Resumed without being asked to: what the first run set aside is built again.
    import_snapshot(path=SNAPSHOT, categories=categories)

    assert paper_indexes() == set(indexes.SET_ASIDE)
    assert HistorySource.objects.get().dropped_indexes == {}
    assert searched(client) == kept


def test_the_indexes_are_set_aside_only_for_an_import_bigger_than_what_is_stored(
    categories,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(indexes, "MIN_PAPERS", 2)
    monkeypatch.setattr(indexes, "DECIDE_AFTER", 1)
    set_aside: list[str] = []
    real = indexes.set_aside

    def noted(source: HistorySource) -> None:
        set_aside.append(source.key)
        real(source)

    monkeypatch.setattr(indexes, "set_aside", noted)

    import_snapshot(path=SNAPSHOT, categories=categories, batch=1)
    assert len(set_aside) == 1 and paper_indexes() == set(indexes.SET_ASIDE)

    # Run again it creates nothing, and more papers are stored than it would bring.
    import_snapshot(path=SNAPSHOT, categories=categories, batch=1)
    assert len(set_aside) == 1
    # Never when told not to.
    Paper.objects.all().delete()
    HistorySource.objects.all().delete()
    import_snapshot(path=SNAPSHOT, categories=categories, batch=1, rebuild_indexes=False)
    assert len(set_aside) == 1


def test_only_our_index_definitions_are_ever_rebuilt(categories):  # noqa: F811
    source = HistorySource.objects.create(
        key="snapshot:x",
        kind=HistorySource.Kind.SNAPSHOT,
        dropped_indexes={"paper_categories": "DROP TABLE papers_paper"},
    )
    with pytest.raises(ValueError, match="Not an index definition"):
        indexes.rebuild(source)
    assert Paper.objects.count() == 0  # the table is still there to count


def test_records_are_chosen_by_their_categories_before_being_read(categories, tmp_path):  # noqa: F811
    lines = SNAPSHOT.read_bytes().splitlines(keepends=True)
    # The first record's categories spelled with an escape: read as JSON reads it, and kept.
    escaped = lines[0].replace(b'"categories": "cs.DC cs.LG"', b'"categories": "cs\\u002eDC"')
    assert escaped != lines[0]
    # Another category's record with a broken field: not ours to report. One that names
    # cs.DC only in its title is read, and kept out by its categories.
    other = b'{"id": "2401.00199", "title": "On cs.DC", "categories": "math.GT", "versions": 3}\n'
    path = tmp_path / "snapshot.json"
    path.write_bytes(escaped + other)

    source = import_snapshot(path=path, categories=categories)

    assert list(Paper.objects.values_list("arxiv_id", "categories")) == [("2401.00101", ["cs.DC"])]
    assert (source.records, source.kept, source.malformed) == (2, 1, 0)


def test_a_busy_table_keeps_its_indexes(categories, caplog):  # noqa: F811
    # Another session reading papers in a long transaction: dropping an index would wait for
    # it, and every page read would queue behind the drop.
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"],
        port=settings["PORT"] or 5432,
        user=settings["USER"],
        password=settings["PASSWORD"],
        dbname=settings["NAME"],
    ) as other:
        other.execute("SELECT count(*) FROM papers_paper").fetchone()

        source = import_snapshot(path=SNAPSHOT, categories=categories, rebuild_indexes=True)

        other.rollback()
    assert "indexes were kept: the table stayed busy" in caplog.text
    assert paper_indexes() == set(indexes.SET_ASIDE)
    assert source.dropped_indexes == {} and source.papers_created == 4


@pytest.mark.parametrize("workers", [0, 1])
def test_a_newer_snapshot_brings_a_stored_paper_up_to_its_version(categories, tmp_path, workers):  # noqa: F811
    revised = SNAPSHOT.read_bytes().splitlines(keepends=True)[2]
    first = json.loads(revised)
    first.update(title="Replication on $\\mathcal{O}(1)$ holidays", comments=None)
    first["versions"] = first["versions"][:1]
    older, newer = tmp_path / "older.json", tmp_path / "newer.json"
    older.write_text(json.dumps(first) + "\n")
    newer.write_bytes(revised)
    import_snapshot(path=older, categories=categories, workers=workers)
    assert "<math" in Paper.objects.get().title_html

    source = import_snapshot(path=newer, categories=categories, workers=workers)

    paper = Paper.objects.get()
    assert (source.papers_created, source.papers_updated, source.listings_created) == (0, 1, 0)
    assert (paper.version, paper.title_html) == (2, "Replication submitted on Christmas Day")
    assert paper.comment == "v2: typos fixed"
    assert list(paper.versions.order_by("number").values_list("number", "title")) == [
        (1, "Replication on $\\mathcal{O}(1)$ holidays"),
        (2, "Replication submitted on Christmas Day"),
    ]


def test_worker_processes_are_used_for_a_big_file_and_leave_a_core(monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert snapshot_module.default_workers(snapshot_module.SMALL_FILE - 1) == 0
    assert snapshot_module.default_workers(10 * snapshot_module.SMALL_FILE) == 1
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert snapshot_module.default_workers(10 * snapshot_module.SMALL_FILE) == 0
