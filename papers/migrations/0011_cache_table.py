"""The cache table that the settings use without Redis (Django's database cache), made by
``migrate``: ``manage.py migrate`` alone gives a working site on any DATABASE_URL, and nothing
else (``make setup``, a deploy script) has to remember ``createcachetable``.

In this app because it is the first of the project's apps in the dependency order and the
project plumbing (``peerrevenue``) has no models or migrations of its own.
"""

from django.conf import settings
from django.core.management import call_command
from django.db import migrations

DATABASE_CACHE = "django.core.cache.backends.db.DatabaseCache"
# The table settings.py names when REDIS_URL is unset. Made even by a migrate that runs with
# Redis configured, so that the same database also serves a run without it.
LOCAL_CACHE_TABLE = "django_cache"


def cache_tables() -> list[str]:
    tables = {LOCAL_CACHE_TABLE}
    tables.update(
        cache["LOCATION"]
        for cache in settings.CACHES.values()
        if cache["BACKEND"] == DATABASE_CACHE
    )
    return sorted(tables)


def create_cache_tables(apps, schema_editor) -> None:
    # createcachetable's own logic (the columns and index DatabaseCache reads); a table that is
    # there already, from an earlier `createcachetable`, is left as it is.
    call_command(
        "createcachetable", *cache_tables(), database=schema_editor.connection.alias, verbosity=0
    )


class Migration(migrations.Migration):
    dependencies = [("papers", "0010_kept_stamps")]

    # Not undone: a cache table holds nothing a migration owns, and dropping it under a
    # running site would break every page.
    operations = [migrations.RunPython(create_cache_tables, migrations.RunPython.noop)]
