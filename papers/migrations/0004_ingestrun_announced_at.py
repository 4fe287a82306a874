"""Store with each ingest run the instant its listing day was announced (issue 12).

Old runs get it from their date by the same rule the ingest now applies: 20:00 New York time on
the calendar day before the listing day.
"""

from django.db import migrations, models

from papers.calendar import announced_at


def fill_announced_at(apps, schema_editor):
    IngestRun = apps.get_model("papers", "IngestRun")
    runs = list(IngestRun.objects.filter(date__isnull=False, announced_at__isnull=True))
    for run in runs:
        run.announced_at = announced_at(run.date)
    IngestRun.objects.bulk_update(runs, ["announced_at"], batch_size=1000)


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0003_identifier_validators"),
    ]

    operations = [
        migrations.AddField(
            model_name="ingestrun",
            name="announced_at",
            field=models.DateTimeField(
                blank=True,
                editable=False,
                help_text="When arXiv announced the listing day: 20:00 New York time the day before",
                null=True,
            ),
        ),
        migrations.RunPython(fill_announced_at, migrations.RunPython.noop),
    ]
