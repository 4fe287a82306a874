"""The papers app's triggers and functions, from now on defined in papers/sql/ and loaded
from there (peerrevenue.sql).

Each file holds the definitions migrations 0008 to 0025 left, the same as pg_get_functiondef
and pg_get_triggerdef show them, so on a database those migrations made this changes nothing.
A later change to one of them is an edit of its file and a migration that loads it again.
"""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [("papers", "0026_paper_fields")]

    # In this order: name_words.sql calls search.sql's functions, and a SQL function's body is
    # checked against what exists when it is made.
    operations = [
        RunSQLFile("papers", "stamps.sql"),
        RunSQLFile("papers", "search.sql"),
        RunSQLFile("papers", "name_words.sql"),
        RunSQLFile("papers", "author_index.sql"),
        RunSQLFile("papers", "day_counts.sql"),
    ]
