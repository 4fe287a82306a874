"""A stamp for the term research counts (``papers.MentionMonth``): moved by any statement that
writes them, so a term page keeps its research under it and shows a recount made later by the
worker at once (peerrevenue.keep), with no call to remember."""

from django.db import migrations

# History: the current definitions of these triggers and functions are in papers/sql/stamps.sql
# (loaded by papers 0027). A fresh database still runs this SQL as written, step by step: change
# the file and load it again in a new migration, never this.
SQL = r"""
INSERT INTO public.kept_stamp (name, value) VALUES ('research', nextval('public.kept_stamp_seq'));
CREATE TRIGGER mention_months_changed AFTER INSERT OR UPDATE OR DELETE ON public.papers_mentionmonth
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('research');
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS mention_months_changed ON public.papers_mentionmonth;
DELETE FROM public.kept_stamp WHERE name = 'research';
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0017_hidden_papers_index")]

    operations = [migrations.RunSQL(SQL, REVERSE_SQL)]
