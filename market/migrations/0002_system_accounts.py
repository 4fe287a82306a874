from django.db import migrations


def create_system_accounts(apps, schema_editor):
    Account = apps.get_model("market", "Account")
    for kind in ("issuance", "fees"):
        Account.objects.get_or_create(kind=kind, user=None)


class Migration(migrations.Migration):
    dependencies = [("market", "0001_initial")]

    operations = [migrations.RunPython(create_system_accounts, migrations.RunPython.noop)]
