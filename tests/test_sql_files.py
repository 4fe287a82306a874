"""The SQL files (``APP/sql/*.sql``, loaded by ``peerrevenue.sql.RunSQLFile``) against the
database the migrations made, and the stamp map in docs/architecture.md against ``pg_trigger``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest
from django.db import connection
from django.db.migrations import Migration
from django.db.migrations.loader import MigrationLoader

from peerrevenue import sql
from peerrevenue.sql import RunSQLFile, sql_path
from tests.processes import ROOT

pytestmark = pytest.mark.django_db

SQL_FILES = sorted(ROOT.glob("*/sql/*.sql"))
ARCHITECTURE = ROOT / "docs/architecture.md"


@dataclass(frozen=True)
class Trigger:
    name: str
    table: str
    timing: str  # before, after, instead of
    events: frozenset[str]  # insert, update, update of status, delete, truncate
    level: str  # row, statement


# One row of the map: | `name` | `table` | after insert, delete (statement) | moves | `file` |
MAP_ROW = re.compile(
    r"^\| `(?P<name>\w+)` \| `(?P<table>\w+)` \| (?P<fires>[^|]+?) \| (?P<moves>[^|]+?) "
    r"\| `(?P<file>[^`]+)` \|$"
)
FIRES = re.compile(
    r"^(?P<timing>before|after|instead of) (?P<events>.+) \((?P<level>row|statement)\)$"
)
TRIGGER_DEF = re.compile(
    r"^CREATE TRIGGER (?P<name>\S+) (?P<timing>BEFORE|AFTER|INSTEAD OF) (?P<events>.+?) "
    r"ON \S+ .*FOR EACH (?P<level>ROW|STATEMENT) .*EXECUTE FUNCTION (?P<call>.+)$"
)
FILE_FUNCTION = re.compile(r"CREATE OR REPLACE (?:FUNCTION|PROCEDURE) (?:public\.)?(\w+)\(")
FILE_TRIGGER = re.compile(r"CREATE OR REPLACE TRIGGER (\w+)\s.*?\sON (?:public\.)?(\w+)", re.S)


def events(text: str) -> frozenset[str]:
    """The events of the map ("insert, update of status") or of PostgreSQL ("INSERT OR UPDATE
    OF status"), as a set."""
    parts = re.split(r",\s*(?=insert|update|delete|truncate)|\s+OR\s+", text)
    return frozenset(part.strip().lower() for part in parts)


@dataclass(frozen=True)
class MapRow:
    trigger: Trigger
    moves: str
    file: str


def stamp_map(text: str | None = None) -> list[MapRow]:
    """The rows of the Stamps section of docs/architecture.md."""
    text = ARCHITECTURE.read_text() if text is None else text
    section = text.split("\n## Stamps", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        row = MAP_ROW.match(line)
        assert row, f"a row of the stamp map is not | `trigger` | `table` | … |: {line}"
        fires = FIRES.match(row["fires"])
        assert fires, f"{row['name']}: Fires is not 'after insert, update (row)': {row['fires']}"
        trigger = Trigger(
            row["name"], row["table"], fires["timing"], events(fires["events"]), fires["level"]
        )
        rows.append(MapRow(trigger, row["moves"], row["file"]))
    return rows


def database_triggers() -> dict[Trigger, str]:
    """The project's triggers (not PostgreSQL's own for foreign keys), each with what it
    calls: ``kept_bump_statement('papers')``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_triggerdef(t.oid) FROM pg_trigger t"
            " JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE NOT t.tgisinternal AND n.nspname = 'public'"
        )
        found = {}
        for table, definition in cursor.fetchall():
            parts = TRIGGER_DEF.match(definition)
            assert parts, definition
            trigger = Trigger(
                parts["name"],
                table,
                parts["timing"].lower(),
                events(parts["events"]),
                parts["level"].lower(),
            )
            found[trigger] = parts["call"]
        return found


def disagreements(rows: list[MapRow], triggers: dict[Trigger, str]) -> list[str]:
    mapped = {row.trigger for row in rows}
    return [f"not in the stamp map: {t}" for t in sorted(set(triggers) - mapped, key=str)] + [
        f"in the stamp map, not in the database: {t}"
        for t in sorted(mapped - set(triggers), key=str)
    ]


def test_the_stamp_map_lists_every_trigger_of_the_database_and_no_other():
    rows = stamp_map()
    assert len(rows) == len({row.trigger.name for row in rows}), "a trigger mapped twice"
    assert disagreements(rows, database_triggers()) == []


def test_a_trigger_missing_from_the_map_or_a_row_without_a_trigger_is_reported():
    rows = stamp_map()
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TRIGGER unmapped AFTER TRUNCATE ON papers_paper"
            " FOR EACH STATEMENT EXECUTE FUNCTION kept_bump_statement('papers')"
        )
    unmapped = Trigger("unmapped", "papers_paper", "after", frozenset({"truncate"}), "statement")
    assert disagreements(rows, database_triggers()) == [f"not in the stamp map: {unmapped}"]

    with connection.cursor() as cursor:
        cursor.execute("DROP TRIGGER unmapped ON papers_paper")
        cursor.execute("DROP TRIGGER hot_ranked ON library_hotranking")
    gone = next(row.trigger for row in rows if row.trigger.name == "hot_ranked")
    assert disagreements(rows, database_triggers()) == [
        f"in the stamp map, not in the database: {gone}"
    ]


def test_the_map_says_which_stamp_each_stamp_trigger_moves_and_in_which_file():
    calls = database_triggers()
    for row in stamp_map():
        call = calls[row.trigger]
        bumped = re.fullmatch(r"kept_bump_statement\('(\w+)'\)", call)
        if bumped:
            assert f"`kept_stamp('{bumped[1]}')`" in row.moves, (row.trigger.name, row.moves)
        if call == "kept_restamp()":
            assert f"`{row.trigger.table}.stamp`" in row.moves, (row.trigger.name, row.moves)
        defined = {
            (name, table) for name, table in FILE_TRIGGER.findall((ROOT / row.file).read_text())
        }
        assert (row.trigger.name, row.trigger.table) in defined, (row.trigger.name, row.file)


def test_every_function_and_trigger_of_the_database_is_defined_in_a_file_and_back():
    in_files = {name for path in SQL_FILES for name in FILE_FUNCTION.findall(path.read_text())}
    with connection.cursor() as cursor:
        # The extensions' functions (unaccent, pg_trgm, btree_gin) are theirs, not ours.
        cursor.execute(
            "SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
            " WHERE n.nspname = 'public' AND NOT EXISTS (SELECT 1 FROM pg_depend d"
            "   WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')"
        )
        in_database = {name for (name,) in cursor.fetchall()}
    assert len(in_database) > 30
    assert in_database - in_files == set(), "defined in no APP/sql file"
    assert in_files - in_database == set(), "in a file, not in the database"

    triggers_in_files = {
        pair for path in SQL_FILES for pair in FILE_TRIGGER.findall(path.read_text())
    }
    triggers_in_database = {(t.name, t.table) for t in database_triggers()}
    assert triggers_in_database == triggers_in_files


def migration_loads() -> list[RunSQLFile]:
    """Every load of a file, in the order a fresh database runs them."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    plan: list[tuple[str, str]] = []
    for leaf in loader.graph.leaf_nodes():
        plan += [key for key in loader.graph.forwards_plan(leaf) if key not in plan]
    return [
        operation
        for key in plan
        for operation in loader.graph.nodes[key].operations
        if isinstance(operation, RunSQLFile)
    ]


def test_every_file_is_loaded_by_a_migration():
    loaded = {sql_path(load.app_label, load.file) for load in migration_loads()}
    assert loaded == set(SQL_FILES)


def definitions() -> dict[str, object]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT p.oid::regprocedure::text, pg_get_functiondef(p.oid) FROM pg_proc p"
            " JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public'"
        )
        functions = dict(cursor.fetchall())
        cursor.execute(
            "SELECT tgrelid::regclass::text || ' ' || tgname, pg_get_triggerdef(oid),"
            " tgenabled::text FROM pg_trigger WHERE NOT tgisinternal"
        )
        triggers = {name: rest for name, *rest in cursor.fetchall()}
        cursor.execute("SELECT name, value FROM kept_stamp")
        stamps = dict(cursor.fetchall())
    return {"functions": functions, "triggers": triggers, "stamps": stamps}


def test_loading_every_file_twice_changes_nothing():
    before = definitions()
    for _ in range(2):
        for load in migration_loads():
            with connection.cursor() as cursor:
                cursor.execute(sql_path(load.app_label, load.file).read_text())
    after = definitions()
    # No trigger added or doubled, no definition changed, and no stamp moved: a reload of the
    # files does not make every kept page render afresh.
    assert after == before


def test_a_load_that_a_later_migration_repeats_runs_nothing(monkeypatch):
    loader = MigrationLoader(None, ignore_no_migrations=True)
    (leaf,) = loader.graph.leaf_nodes("papers")
    first = next(
        load
        for load in loader.graph.nodes[("papers", "0027_sql_files")].operations
        if isinstance(load, RunSQLFile) and load.file == "stamps.sql"
    )
    other = next(
        load
        for load in loader.graph.nodes[("papers", "0027_sql_files")].operations
        if isinstance(load, RunSQLFile) and load.file == "search.sql"
    )
    # A later migration that changed stamps.sql and loads it again.
    reload = RunSQLFile("papers", "stamps.sql")

    class Again(Migration):
        operations = [reload]

    again = Again("9999_stamps_again", "papers")
    key = ("papers", again.name)
    loader.disk_migrations[key] = again
    loader.graph.add_node(key, again)
    loader.graph.add_dependency(again, key, leaf)
    monkeypatch.setattr(sql, "MigrationLoader", lambda *args, **kwargs: loader)

    def collected(load: RunSQLFile) -> list[str]:
        with connection.schema_editor(collect_sql=True) as editor:
            load.database_forwards("papers", editor, None, None)
            return list(editor.collected_sql)

    assert collected(first) == []
    assert collected(other) and "paper_search_text" in collected(other)[0]
    assert collected(reload) == [sql_path("papers", "stamps.sql").read_text()]
