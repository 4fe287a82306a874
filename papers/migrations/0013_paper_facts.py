"""When arXiv received each version (the paper page's version history, as arXiv's abstract
page shows it). The paper's other facts (comment, journal reference, DOI, licence, subjects,
first submission) were columns already; a version's row moves its paper's stamp (0010), so
the kept paper page follows."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("papers", "0012_lease")]

    operations = [
        migrations.AddField(
            model_name="paperversion",
            name="submitted_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
