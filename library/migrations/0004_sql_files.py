"""The library's stamp triggers, from now on defined in library/sql/stamps.sql and loaded
from there (peerrevenue.sql): the same triggers 0001 to 0003 made, so this changes nothing on
a database those migrations made. A later change is an edit of the file and a migration that
loads it again.
"""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [
        ("library", "0003_hot_rankings"),
        # kept_bump_statement: papers/sql/stamps.sql.
        ("papers", "0027_sql_files"),
    ]

    operations = [RunSQLFile("library", "stamps.sql")]
