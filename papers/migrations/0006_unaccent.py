"""PostgreSQL's unaccent, so that author pages match names with and without accents.

IF NOT EXISTS: the search helper's migration creates the same extension, in either order.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("papers", "0004_ingestrun_announced_at"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE EXTENSION IF NOT EXISTS unaccent",
            # Left in place on the way back: another app's search may use it too.
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
