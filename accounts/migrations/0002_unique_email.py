"""One account per e-mail address, whatever its case, enforced by the database.

The sign-up form checks first, but two sign-ups submitted at the same moment both pass that
check; only a unique index stops the second. Empty addresses (staff made in the admin without
one) stay allowed, any number of them.
"""

from django.db import migrations

INDEX = "accounts_user_email_ci_unique"


def refuse_existing_duplicates(apps, schema_editor) -> None:
    User = apps.get_model("auth", "User")
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            f"SELECT lower(email), count(*) FROM {User._meta.db_table} "
            "WHERE email <> '' GROUP BY lower(email) HAVING count(*) > 1 ORDER BY 1 LIMIT 20"
        )
        duplicates = cursor.fetchall()
    if duplicates:
        listed = ", ".join(f"{email} ({count} accounts)" for email, count in duplicates)
        raise RuntimeError(
            "Cannot make e-mail addresses unique: some are shared by several accounts. "
            f"Give each account its own address (or clear it) in the admin first: {listed}"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_preferences_and_digests"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunPython(refuse_existing_duplicates, migrations.RunPython.noop),
        migrations.RunSQL(
            f"CREATE UNIQUE INDEX {INDEX} ON auth_user (lower(email)) WHERE email <> ''",
            f"DROP INDEX {INDEX}",
        ),
    ]
