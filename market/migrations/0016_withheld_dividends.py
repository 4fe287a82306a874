"""Verified authors are not paid for their own papers: what is withheld is recorded with the
claim that made them its author, and a claim's approval waits for any payout of its paper
(market/sql/claim_decisions.sql)."""

import django.db.models.deletion
from django.db import migrations, models

from peerrevenue.sql import RunSQLFile


class Migration(migrations.Migration):
    dependencies = [
        ("authorship", "0002_sql_files"),
        ("market", "0015_dividend_windows"),
    ]

    operations = [
        migrations.CreateModel(
            name="WithheldDividend",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "shares",
                    models.BigIntegerField(help_text="Shares held through the window, not paid."),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "account",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="withheld",
                        to="market.account",
                    ),
                ),
                (
                    "claim",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="withheld_dividends",
                        to="authorship.claim",
                    ),
                ),
                (
                    "event",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="withheld",
                        to="market.dividendevent",
                    ),
                ),
            ],
            options={
                "ordering": ["-id"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("event", "account"), name="one_withholding_per_event"
                    )
                ],
            },
        ),
        RunSQLFile("market", "claim_decisions.sql"),
    ]
