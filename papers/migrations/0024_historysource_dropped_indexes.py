"""Bulk history: the paper indexes an import set aside, to rebuild when it finishes."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0023_listing_category_day"),
    ]

    operations = [
        migrations.AddField(
            model_name="historysource",
            name="dropped_indexes",
            field=models.JSONField(
                blank=True, default=dict, help_text="Indexes set aside until the import finishes"
            ),
        ),
    ]
