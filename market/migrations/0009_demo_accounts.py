from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("market", "0008_kept_stamps")]

    operations = [
        migrations.AddField(
            model_name="account",
            name="demo",
            field=models.BooleanField(
                default=False,
                editable=False,
                help_text="A demo trader of the local sample market.",
            ),
        ),
    ]
