"""Each dividend records its paper's submission window: shares bought after the paper was
submitted and before it was announced earn nothing from it (market/windows.py). Dividends paid
before the rule keep what they paid: their window is the announcement instant alone."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("market", "0014_fill_notices_price_and_fee")]

    operations = [
        migrations.AddField(
            model_name="dividendevent",
            name="window_opens_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.AddField(
            model_name="dividendevent",
            name="window_source",
            field=models.CharField(max_length=16, default="announcement"),
            preserve_default=False,
        ),
        migrations.RunSQL(
            "UPDATE market_dividendevent SET window_opens_at = announced_at",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.AlterField(
            model_name="dividendevent",
            name="window_opens_at",
            field=models.DateTimeField(
                help_text="When the paper's submission window opened: only shares held from "
                "then to the announcement are paid (market/windows.py)."
            ),
        ),
        migrations.AlterField(
            model_name="dividendevent",
            name="window_source",
            field=models.CharField(
                max_length=16,
                choices=[
                    ("submitted", "the paper's submission"),
                    ("period", "the start of its submission period"),
                    ("announcement", "the announcement (paid before the window rule)"),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="dividendevent",
            name="shares",
            field=models.BigIntegerField(
                help_text="Shares paid: held through the window, withheld ones not counted (0 if "
                "it came before the term was listed)."
            ),
        ),
    ]
