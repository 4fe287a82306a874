from django.db import migrations


def create_categories(apps, schema_editor):
    from papers.categories import COMPUTER_SCIENCE, CS_CATEGORIES, ENABLED_BY_DEFAULT

    Category = apps.get_model("papers", "Category")
    archive_code, archive_name = COMPUTER_SCIENCE
    for code, name in CS_CATEGORIES.items():
        Category.objects.get_or_create(
            code=code,
            defaults={
                "name": name,
                "archive_code": archive_code,
                "archive_name": archive_name,
                "ingest_enabled": code in ENABLED_BY_DEFAULT,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("papers", "0001_initial")]

    operations = [migrations.RunPython(create_categories, migrations.RunPython.noop)]
