"""SQL files: the triggers and PL/pgSQL functions of an app live in ``APP/sql/NAME.sql``, and
migrations load them with ``RunSQLFile(app_label, file)``.

A file holds the current definition of what it defines and can be run any number of times
(``CREATE OR REPLACE FUNCTION``, ``CREATE OR REPLACE TRIGGER``, stamp rows inserted ``ON
CONFLICT DO NOTHING``). ``OR REPLACE`` rather than ``DROP TRIGGER`` then ``CREATE``: a
trigger replaced locks its table against writes only while the migration's transaction lasts,
where a drop would lock out readers too. A change is an edit of the file and a new migration
that loads it again; docs/architecture.md says so and maps every trigger to what it moves.

The file is read when the migration runs, so an old migration would load today's text. On a
database that migrates step by step (a fresh one), today's text may name tables or columns a
later migration makes. So a load does nothing when a later migration loads the same file
again: the last load runs it, once everything it names exists. Until then the database has
the definitions the historical migrations wrote inline.

Going back does nothing: the text of the definitions before a load is not in the file any
more (it is in the migration history and in git). A migration whose change must be undone on
the way back adds a ``RunSQL`` with that reverse SQL beside its load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.apps import apps
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.operations.base import Operation


def sql_path(app_label: str, name: str) -> Path:
    """Where an app's SQL file lives: beside its models, in ``sql/``."""
    return Path(apps.get_app_config(app_label).path) / "sql" / name


class RunSQLFile(Operation):
    """Run ``APP/sql/FILE`` as it is when the migration runs (see the module docstring)."""

    reduces_to_sql = True
    reversible = True
    elidable = False

    def __init__(self, app_label: str, file: str) -> None:
        self.app_label = app_label
        self.file = file

    def state_forwards(self, app_label: str, state: Any) -> None:
        pass  # no model changes: triggers and functions are not in Django's state

    def database_forwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        if not loaded_again_later(self):
            schema_editor.execute(sql_path(self.app_label, self.file).read_text(), params=None)

    def database_backwards(
        self, app_label: str, schema_editor: Any, from_state: Any, to_state: Any
    ) -> None:
        pass  # see the module docstring: going back leaves the definitions as they are

    def describe(self) -> str:
        return f"Load {self.app_label}/sql/{self.file}"


def loaded_again_later(load: RunSQLFile) -> bool:
    """Whether a migration that depends on ``load``'s own loads the same file again.

    The migrations on disk, as ``migrate`` reads them: ``load`` is found among them by
    identity (a Migration's operations are its class's objects), so an operation that belongs
    to no migration is refused rather than guessed about."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    same_file = [
        key
        for key, migration in loader.disk_migrations.items()
        if any(
            isinstance(operation, RunSQLFile)
            and (operation.app_label, operation.file) == (load.app_label, load.file)
            for operation in migration.operations
        )
    ]
    own = [
        key
        for key in same_file
        if any(operation is load for operation in loader.disk_migrations[key].operations)
    ]
    if len(own) != 1:
        raise RuntimeError(f"{load.describe()}: not an operation of one migration on disk")
    later = set(loader.graph.backwards_plan(own[0])) - {own[0]}
    return any(key in later for key in same_file)
