"""Search speed (issue 15): the fallback for misspellings compares with a small table of the
distinct words of names and titles, kept by triggers, instead of every paper's names; ``ti:``
gets an index of the titles' words; the date filter an index of announcement dates.

The trigram column and index on every paper's names and title go: nothing reads them now.
"""

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import papers.fulltext
from django.db import migrations, models

# History: the current definitions of these triggers and functions are in
# papers/sql/name_words.sql (loaded by papers 0027). A fresh database still runs this SQL as
# written, step by step: change the file and load it again in a new migration, never this.
NAME_WORDS_SQL = r"""
-- The words of a paper's names and title, accent-folded and lowercase, as the fallback
-- compares them (two letters are too few to compare by trigrams).
CREATE OR REPLACE FUNCTION public.paper_name_words(authors text, title_html text)
  RETURNS SETOF text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$
  SELECT DISTINCT word
  FROM pg_catalog.regexp_split_to_table(pg_catalog.lower(public.paper_unaccent(
    coalesce(authors, '') || ' ' || coalesce(public.paper_search_text(title_html), ''))),
    '[^[:alnum:]]+') AS word
  WHERE pg_catalog.length(word) >= 3
  $fn$;

-- Statement triggers: a bulk write (the ingest's upserts, COPY) adds its words in one
-- statement, not one per paper.
CREATE OR REPLACE FUNCTION public.papers_nameword_inserted() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    INSERT INTO public.papers_nameword (word)
    SELECT DISTINCT w.word
    FROM new_papers AS p, LATERAL public.paper_name_words(p.authors_text, p.title_html) AS w(word)
    ON CONFLICT DO NOTHING;
    RETURN NULL;
  END
  $fn$;

CREATE OR REPLACE FUNCTION public.papers_nameword_updated() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    INSERT INTO public.papers_nameword (word)
    SELECT DISTINCT w.word
    FROM new_papers AS p
    JOIN old_papers AS o ON o.id = p.id
    CROSS JOIN LATERAL public.paper_name_words(p.authors_text, p.title_html) AS w(word)
    WHERE p.authors_text IS DISTINCT FROM o.authors_text
       OR p.title_html IS DISTINCT FROM o.title_html
    ON CONFLICT DO NOTHING;
    RETURN NULL;
  END
  $fn$;

CREATE TRIGGER papers_nameword_insert AFTER INSERT ON papers_paper
  REFERENCING NEW TABLE AS new_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_nameword_inserted();
CREATE TRIGGER papers_nameword_update AFTER UPDATE ON papers_paper
  REFERENCING OLD TABLE AS old_papers NEW TABLE AS new_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_nameword_updated();

INSERT INTO papers_nameword (word)
SELECT DISTINCT w.word
FROM papers_paper AS p, LATERAL public.paper_name_words(p.authors_text, p.title_html) AS w(word)
ON CONFLICT DO NOTHING;
"""

NAME_WORDS_REVERSE_SQL = """
DROP TRIGGER IF EXISTS papers_nameword_insert ON papers_paper;
DROP TRIGGER IF EXISTS papers_nameword_update ON papers_paper;
DROP FUNCTION IF EXISTS public.papers_nameword_inserted();
DROP FUNCTION IF EXISTS public.papers_nameword_updated();
DROP FUNCTION IF EXISTS public.paper_name_words(text, text);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("papers", "0008_search"),
    ]

    operations = [
        migrations.CreateModel(
            name="NameWord",
            fields=[("word", models.TextField(primary_key=True, serialize=False))],
            options={
                "indexes": [
                    django.contrib.postgres.indexes.GinIndex(
                        django.contrib.postgres.indexes.OpClass("word", name="gin_trgm_ops"),
                        name="nameword_trigrams",
                    )
                ],
            },
        ),
        migrations.RunSQL(NAME_WORDS_SQL, NAME_WORDS_REVERSE_SQL),
        migrations.RemoveIndex(model_name="paper", name="paper_search_names"),
        migrations.RemoveField(model_name="paper", name="search_names"),
        migrations.AddIndex(
            model_name="paper",
            index=django.contrib.postgres.indexes.GinIndex(
                django.contrib.postgres.search.SearchVector(
                    papers.fulltext.SearchText(models.F("title_html")), config="english_unaccent"
                ),
                name="paper_title_vector",
            ),
        ),
        migrations.AddIndex(
            model_name="listing",
            index=models.Index(
                fields=["date"], include=("announce_type", "paper"), name="listing_date"
            ),
        ),
    ]
