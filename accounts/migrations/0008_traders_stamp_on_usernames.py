"""The ``traders`` stamp moves when a trader's name changes too, however it is written (the
admin, ``QuerySet.update()``, SQL): kept pieces that name traders (a term page's holders and
trades, the leaderboard) are keyed by it, and ``auth_user`` has no stamp of its own. Defined
in accounts/sql/stamps.sql."""

from django.db import migrations

from peerrevenue.sql import RunSQLFile

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS traders_renamed ON public.auth_user;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0007_sql_files"),
        ("papers", "0028_categories_stamp"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        RunSQLFile("accounts", "stamps.sql"),
        migrations.RunSQL(migrations.RunSQL.noop, REVERSE_SQL),
    ]
