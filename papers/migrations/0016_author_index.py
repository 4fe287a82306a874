"""Author pages by an index: each paper's author names, folded as the page compares them
(unaccent(lower()), the rendered name or else the raw one), in a GIN index. The page asked
every paper's JSON before (a scan: 1–2 s at a few hundred thousand papers); now it reads the
author's papers alone.

``unaccent`` is only STABLE (its dictionary could change), so the function names the
dictionary explicitly and is declared IMMUTABLE, the usual way to index it; the index must be
rebuilt if the unaccent rules are ever changed.
"""

from django.db import migrations

# History: the current definitions of these triggers and functions are in
# papers/sql/author_index.sql (loaded by papers 0027). A fresh database still runs this SQL as
# written, step by step: change the file and load it again in a new migration, never this.
SQL = r"""
CREATE FUNCTION public.paper_author_keys(authors jsonb) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$
  SELECT coalesce(array_agg(public.unaccent('public.unaccent'::regdictionary,
                    lower(coalesce(nullif(author->>'name_text', ''), author->>'name')))), '{}')
  FROM jsonb_array_elements(
    CASE WHEN jsonb_typeof(authors) = 'array' THEN authors ELSE '[]'::jsonb END) AS author
  WHERE jsonb_typeof(author) = 'object'
  $fn$;
CREATE INDEX paper_author_keys ON public.papers_paper USING gin (public.paper_author_keys(authors));
"""

REVERSE = r"""
DROP INDEX IF EXISTS public.paper_author_keys;
DROP FUNCTION IF EXISTS public.paper_author_keys(jsonb);
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0015_term_research_months")]

    operations = [migrations.RunSQL(SQL, REVERSE)]
