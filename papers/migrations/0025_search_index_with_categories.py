"""Search: one GIN index of a paper's categories, words and title words, in place of one each.

A search in a category intersected two bitmaps: every paper with the word (a third of a million
for a common one) and every paper of the category; and categories as ``jsonb`` made each
candidate a recheck of its search vector. A ``ti:`` search with other words read the search
vector of each paper with the title word. In one index of the categories as ``text[]``, the
vector and the title's words, GIN intersects the entries itself, rarest first
(papers.fulltext.CategoryCodes). Queries on any one of them use that column alone.

The arXiv id is a column too (``btree_gin``): when a common word matches too many papers to
rank them all, ranking looks at the matches among the newest papers, and a bitmap of every
paper with the word, ANDed with the newest ids, cost 13 ms at a million papers for 45 matches;
in the index, under 1 ms.
"""

import django.contrib.postgres.indexes
from django.contrib.postgres.operations import BtreeGinExtension
from django.db import migrations, models

import papers.fulltext

# History: the current definitions of these triggers and functions are in papers/sql/search.sql
# (loaded by papers 0027). A fresh database still runs this SQL as written, step by step: change
# the file and load it again in a new migration, never this.
CATEGORY_CODES = """
CREATE OR REPLACE FUNCTION public.paper_category_codes(categories jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array(SELECT jsonb_array_elements_text(categories)) $$;
"""


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0024_historysource_dropped_indexes"),
    ]

    operations = [
        BtreeGinExtension(),
        migrations.RunSQL(
            CATEGORY_CODES,
            reverse_sql="DROP FUNCTION IF EXISTS public.paper_category_codes(jsonb);",
        ),
        migrations.AddIndex(
            model_name="paper",
            index=django.contrib.postgres.indexes.GinIndex(
                papers.fulltext.CategoryCodes("categories"),
                models.F("search_vector"),
                papers.fulltext.title_vector(),
                models.F("arxiv_id"),
                name="paper_search",
            ),
        ),
        migrations.RemoveIndex(model_name="paper", name="paper_search_vector"),
        migrations.RemoveIndex(model_name="paper", name="paper_categories"),
        migrations.RemoveIndex(model_name="paper", name="paper_title_vector"),
    ]
