"""The ``traders`` stamp (0006) moves when a trader's name changes too, however it is written
(the admin, ``QuerySet.update()``, SQL): kept pieces that name traders (a term page's holders
and trades, the leaderboard) are keyed by it, and ``auth_user`` has no stamp of its own."""

from django.db import migrations

SQL = r"""
CREATE TRIGGER traders_renamed AFTER UPDATE ON public.auth_user
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION public.kept_bump_statement('traders');
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS traders_renamed ON public.auth_user;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_private_traders_and_attempt_counts"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunSQL(SQL, REVERSE_SQL)]
