"""What the bulk sources say that papers lost: every version's date, every DOI, the report
number; and no "et al" author.

- ``version_dates``: item n-1 is version n's date (ISO, UTC) or null (``Paper.date_versions``).
- ``doi`` becomes text: several DOIs, separated by spaces, overflowed 200 characters.
- ``report_no``: the snapshot's ``report-no``, arXivRaw's ``<report-no>``.
- Both new columns have a default in the database too, for rows written by plain SQL or COPY
  that do not name them (a benchmark's corpus, a test's raw insert).
- ``more_authors``: the byline ends in "et al" (the page says so, unlinked).
- A stored byline ending in an "et al" author loses it, and says ``more_authors`` instead: the
  parsers no longer make one (``papers.arxiv.rss.read_byline``), and the author index's
  triggers (0021) take its row away with it. An update of the papers that have one, found by
  their last author's name.
"""

from django.db import migrations, models

DROP_ET_AL = r"""
UPDATE public.papers_paper
SET authors = authors - (jsonb_array_length(authors) - 1),
    more_authors = true,
    authors_text = regexp_replace(authors_text, '(^|,\s*)et\.?\s*al\.?\s*$', '', 'i')
WHERE jsonb_typeof(authors) = 'array'
  AND jsonb_array_length(authors) > 1
  AND trim(authors -> -1 ->> 'name') ~* '^et\.?\s*al\.?$'
"""


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0025_search_index_with_categories"),
    ]

    operations = [
        migrations.AddField(
            model_name="paper",
            name="report_no",
            field=models.TextField(
                blank=True,
                db_default="",
                default="",
                help_text="The report number(s), as arXiv has them",
            ),
        ),
        migrations.AddField(
            model_name="paper",
            name="version_dates",
            field=models.JSONField(
                blank=True,
                db_default=models.Value([], models.JSONField()),
                default=list,
                editable=False,
            ),
        ),
        migrations.AlterField(
            model_name="paper",
            name="doi",
            field=models.TextField(blank=True, help_text="One or several, separated by spaces"),
        ),
        migrations.AddField(
            model_name="paper",
            name="more_authors",
            field=models.BooleanField(
                db_default=False,
                default=False,
                help_text='The byline ends in "et al": arXiv lists no more authors',
            ),
        ),
        migrations.RunSQL(DROP_ET_AL, reverse_sql=migrations.RunSQL.noop),
    ]
