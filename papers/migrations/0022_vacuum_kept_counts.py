"""Vacuum the two tables the triggers of 0020 and 0021 filled: the category and author pages
read them by index-only scans, which skip the table only where a vacuum has marked its pages
all-visible. Autovacuum does so as rows come; a table filled at once by a migration would
otherwise be read row by row until its first turn. Not in a transaction (VACUUM cannot be)."""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("papers", "0021_authorship")]

    operations = [
        migrations.RunSQL(
            "VACUUM (ANALYZE) public.papers_categoryday, public.papers_authorship",
            migrations.RunSQL.noop,
        )
    ]
