"""The ``categories`` stamp (peerrevenue.keep; the sequence, ``kept_stamp`` and
``kept_bump_statement`` come from 0010): moved whenever a category is added, removed, or
renamed (its code, name or archive), so that every kept piece that names categories without
being keyed by their rows' stamps (a paper's page: its subjects and listings) changes on the
next request, however the change was written."""

from django.db import migrations

SQL = r"""
INSERT INTO public.kept_stamp (name, value)
  VALUES ('categories', nextval('public.kept_stamp_seq'));
CREATE TRIGGER categories_renamed AFTER UPDATE ON public.papers_category
  FOR EACH ROW
  WHEN ((OLD.code, OLD.name, OLD.archive_code, OLD.archive_name)
        IS DISTINCT FROM (NEW.code, NEW.name, NEW.archive_code, NEW.archive_name))
  EXECUTE FUNCTION public.kept_bump_statement('categories');
CREATE TRIGGER categories_added_or_removed AFTER INSERT OR DELETE ON public.papers_category
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('categories');
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS categories_added_or_removed ON public.papers_category;
DROP TRIGGER IF EXISTS categories_renamed ON public.papers_category;
DELETE FROM public.kept_stamp WHERE name = 'categories';
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0025_search_index_with_categories")]

    operations = [migrations.RunSQL(SQL, REVERSE_SQL)]
