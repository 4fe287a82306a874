"""Dividends pay the shares held at arXiv's announcement, and only from a term's listing on.

``Term.listed_at``: existing terms were listed when they were created. ``DividendEvent.
announced_at``: the instant its listing day was announced (20:00 New York, the day before),
which ``papers.calendar.announced_at`` computes and which ``check_ledger`` checks holdings at.
"""

import django.utils.timezone
from django.db import migrations, models

from papers.calendar import announced_at


def backfill(apps, schema_editor) -> None:
    Term = apps.get_model("market", "Term")
    DividendEvent = apps.get_model("market", "DividendEvent")
    Term.objects.update(listed_at=models.F("created_at"))
    for day in DividendEvent.objects.values_list("date", flat=True).distinct():
        DividendEvent.objects.filter(date=day).update(announced_at=announced_at(day))


class Migration(migrations.Migration):
    dependencies = [("market", "0005_place_trade_function")]

    operations = [
        migrations.AddField(
            model_name="term",
            name="listed_at",
            field=models.DateTimeField(
                default=django.utils.timezone.now,
                editable=False,
                help_text="When it was listed: papers announced before this moment pay no "
                "dividend on it.",
            ),
        ),
        migrations.AddField(
            model_name="dividendevent",
            name="announced_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="dividendevent",
            name="announced_at",
            field=models.DateTimeField(
                help_text="When that listing was announced: the shares held at this instant "
                "are paid."
            ),
        ),
        migrations.AlterField(
            model_name="dividendevent",
            name="date",
            field=models.DateField(help_text="Listing date of the paper."),
        ),
        migrations.AlterField(
            model_name="dividendevent",
            name="shares",
            field=models.BigIntegerField(
                help_text="Shares held at the announcement (0 if it came before the term was "
                "listed)."
            ),
        ),
    ]
