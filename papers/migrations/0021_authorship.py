"""Author pages by an ordered index: one row per (shown paper, folded author name), kept by
triggers on papers (papers.Authorship).

The author index of 0016 (GIN over each paper's folded names) finds an author's papers, but
cannot order them: the page visited every one of the author's papers (a heap page each, 313 at
200,000 papers, 609 at 400,000) to count and sort them on every render, and its pending list
(4 MB after a bulk import) was read whole by every search. A btree on (name, submission time,
identifier) with the paper's id in it gives the page's thirty rows and the count from a few
index pages; the GIN index is dropped, since nothing reads it any more (the function stays:
the triggers fold names with it).

- Inserted papers add a row per distinct folded name unless hidden; deleted papers take theirs.
- An update rewrites the rows of the papers whose authors, submission time, identifier or
  hidden flag changed (a statement trigger's transition tables: one join per statement).
- The rows are written after the triggers exist, in the migration's transaction: creating a
  trigger locks writers out of papers until it commits, so nothing is missed in between.
"""

import django.db.models.deletion
from django.db import migrations, models

# History: the current definitions of these triggers and functions are in
# papers/sql/author_index.sql (loaded by papers 0027). A fresh database still runs this SQL as
# written, step by step: change the file and load it again in a new migration, never this.
SQL = r"""
CREATE INDEX papers_authorship_page ON public.papers_authorship
  (name, submitted_at DESC NULLS LAST, arxiv_id DESC) INCLUDE (paper_id);

CREATE FUNCTION public.papers_authorship_rows(ids bigint[]) RETURNS void
  LANGUAGE sql AS $fn$
  INSERT INTO public.papers_authorship (paper_id, name, submitted_at, arxiv_id)
  SELECT DISTINCT p.id, key, p.submitted_at, p.arxiv_id
  FROM public.papers_paper AS p, unnest(public.paper_author_keys(p.authors)) AS key
  WHERE p.id = ANY(ids) AND NOT p.hidden AND key IS NOT NULL
  $fn$;

CREATE FUNCTION public.papers_authorship_added() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO public.papers_authorship (paper_id, name, submitted_at, arxiv_id)
    SELECT DISTINCT p.id, key, p.submitted_at, p.arxiv_id
    FROM added_papers AS p, unnest(public.paper_author_keys(p.authors)) AS key
    WHERE NOT p.hidden AND key IS NOT NULL;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_authorship_added AFTER INSERT ON public.papers_paper
  REFERENCING NEW TABLE AS added_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_added();

CREATE FUNCTION public.papers_authorship_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
  DECLARE
    changed bigint[];
  BEGIN
    SELECT array_agg(now.id) INTO changed
    FROM after_papers AS now JOIN before_papers AS was ON was.id = now.id
    WHERE (was.authors, was.submitted_at, was.arxiv_id, was.hidden)
          IS DISTINCT FROM (now.authors, now.submitted_at, now.arxiv_id, now.hidden);
    IF changed IS NOT NULL THEN
      DELETE FROM public.papers_authorship WHERE paper_id = ANY(changed);
      PERFORM public.papers_authorship_rows(changed);
    END IF;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_authorship_changed AFTER UPDATE ON public.papers_paper
  REFERENCING OLD TABLE AS before_papers NEW TABLE AS after_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_changed();

CREATE FUNCTION public.papers_authorship_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM public.papers_authorship WHERE paper_id IN (SELECT id FROM removed_papers);
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_authorship_removed AFTER DELETE ON public.papers_paper
  REFERENCING OLD TABLE AS removed_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_removed();

INSERT INTO public.papers_authorship (paper_id, name, submitted_at, arxiv_id)
SELECT DISTINCT p.id, key, p.submitted_at, p.arxiv_id
FROM public.papers_paper AS p, unnest(public.paper_author_keys(p.authors)) AS key
WHERE NOT p.hidden AND key IS NOT NULL;
ANALYZE public.papers_authorship;

DROP INDEX IF EXISTS public.paper_author_keys;
"""

REVERSE_SQL = r"""
CREATE INDEX IF NOT EXISTS paper_author_keys ON public.papers_paper
  USING gin (public.paper_author_keys(authors));
DROP TRIGGER IF EXISTS papers_authorship_removed ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_authorship_removed();
DROP TRIGGER IF EXISTS papers_authorship_changed ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_authorship_changed();
DROP TRIGGER IF EXISTS papers_authorship_added ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_authorship_added();
DROP FUNCTION IF EXISTS public.papers_authorship_rows(bigint[]);
DROP INDEX IF EXISTS public.papers_authorship_page;
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0020_category_days")]

    operations = [
        migrations.CreateModel(
            name="Authorship",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("name", models.TextField()),
                ("submitted_at", models.DateTimeField(null=True)),
                ("arxiv_id", models.CharField(max_length=32)),
                (
                    "paper",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="papers.paper",
                    ),
                ),
            ],
        ),
        migrations.RunSQL(SQL, REVERSE_SQL),
    ]
