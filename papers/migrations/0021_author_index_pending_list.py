"""The author index's pending list kept short, so that an author's page reads their papers
alone (papers 0016).

A GIN index takes new entries into an unsorted pending list first, which every search reads
whole until it is merged (by a vacuum, or by the insert that passes the list's limit, 4 MB by
default). After a bulk import the author index's list held ~450 pages: each author page read
them all (12 ms of the 13 its query took at 200,000 papers) whoever the author was. With a
256 kB limit inserts still go into the list in batches, and a search reads at most ~32 pages
of it.
"""

from django.db import migrations

SQL = r"""
ALTER INDEX public.paper_author_keys SET (gin_pending_list_limit = 256);
SELECT gin_clean_pending_list('public.paper_author_keys'::regclass);
"""

REVERSE = r"""
ALTER INDEX public.paper_author_keys RESET (gin_pending_list_limit);
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0020_category_days")]

    operations = [migrations.RunSQL(SQL, REVERSE)]
