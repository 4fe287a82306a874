"""The ``categories`` stamp (peerrevenue.keep): moved whenever a category is added, removed, or
renamed (its code, name or archive), so that every kept piece that names categories without
being keyed by their rows' stamps (a paper's page: its subjects and listings) changes on the
next request, however the change was written. Defined in papers/sql/stamps.sql."""

from django.db import migrations

from peerrevenue.sql import RunSQLFile

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS categories_added_or_removed ON public.papers_category;
DROP TRIGGER IF EXISTS categories_renamed ON public.papers_category;
DELETE FROM public.kept_stamp WHERE name = 'categories';
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0027_sql_files")]

    operations = [
        RunSQLFile("papers", "stamps.sql"),
        migrations.RunSQL(migrations.RunSQL.noop, REVERSE_SQL),
    ]
