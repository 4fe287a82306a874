"""The traders stamp's triggers, from now on defined in accounts/sql/stamps.sql and loaded
from there (peerrevenue.sql): the same triggers 0006 made, so this changes nothing on a
database that migration made. A later change is an edit of the file and a migration that
loads it again.
"""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_private_traders_and_attempt_counts"),
        # kept_bump_statement: papers/sql/stamps.sql.
        ("papers", "0027_sql_files"),
    ]

    operations = [RunSQLFile("accounts", "stamps.sql")]
