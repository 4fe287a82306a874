"""The claims stamp's triggers, defined in authorship/sql/stamps.sql (peerrevenue.sql)."""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [
        ("authorship", "0001_claims"),
        # kept_bump_statement and kept_stamp: papers/sql/stamps.sql.
        ("papers", "0027_sql_files"),
    ]

    operations = [RunSQLFile("authorship", "stamps.sql")]
