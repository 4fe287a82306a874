"""The day counts' triggers on listings and papers added or deleted call two functions, each
told by its trigger's argument whether to add or take away, where they called four that
differed only in that sign. Same triggers, same counts. Defined in papers/sql/day_counts.sql."""

from django.db import migrations

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [("papers", "0028_categories_stamp")]

    operations = [RunSQLFile("papers", "day_counts.sql")]
