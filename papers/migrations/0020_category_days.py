"""Each category's announcement days with their counts, kept by the database (papers.CategoryDay).

The category page's navigation and length came from a GROUP BY over the category's whole
history on every render after a change (127 ms at 400,000 papers). Now statement triggers keep
one row per (category, day): visible new and cross-listed papers, and visible replacements.

- A listing counts while it exists and its paper does and is not hidden. It is counted by
  whichever of the two inserts comes second (the daily ingest writes papers first, the bulk
  history writes listings first; the foreign keys are deferred), and taken away by whichever
  delete comes first (Django deletes a paper's listings before the paper). The join to the
  paper in each trigger is what makes each listing count exactly once.
- Hiding or showing a paper moves its listings' days by one each.
- Deltas are applied in one upsert, in (category, day) order so that two writers lock the rows
  in the same order; a row that falls to nothing is deleted (a day with only hidden papers is
  no announcement day on the page). A negative delta with no row to take from (a category's
  days deleted before its listings) inserts nothing that survives the same call.

The triggers are created before the rows are counted, in the migration's transaction: creating
them locks out writers to the listings until it commits, so nothing is missed in between.
"""

import django.db.models.deletion
from django.db import migrations, models

STREAM = "('new', 'cross')"  # Listing.STREAM_TYPES

# History: the current definitions of these triggers and functions are in
# papers/sql/day_counts.sql (loaded by papers 0027). A fresh database still runs this SQL as
# written, step by step: change the file and load it again in a new migration, never this.
SQL = rf"""
CREATE FUNCTION public.papers_days_apply(c bigint[], d date[], p int[], r int[])
  RETURNS void LANGUAGE sql AS $fn$
  INSERT INTO public.papers_categoryday AS day (category_id, date, papers, replacements)
  SELECT x.c, x.d, sum(x.p), sum(x.r) FROM unnest(c, d, p, r) AS x(c, d, p, r)
  GROUP BY x.c, x.d HAVING sum(x.p) <> 0 OR sum(x.r) <> 0 ORDER BY x.c, x.d
  ON CONFLICT (category_id, date) DO UPDATE
    SET papers = day.papers + EXCLUDED.papers,
        replacements = day.replacements + EXCLUDED.replacements;
  DELETE FROM public.papers_categoryday AS day USING unnest(c, d) AS x(c, d)
  WHERE day.category_id = x.c AND day.date = x.d AND day.papers <= 0 AND day.replacements <= 0;
  $fn$;

-- Listings added: counted where their paper is there and shown.
CREATE FUNCTION public.papers_days_listings_added() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (count(*) FILTER (WHERE l.announce_type IN {STREAM}))::int AS p,
                 (count(*) FILTER (WHERE l.announce_type NOT IN {STREAM}))::int AS r
          FROM added_listings AS l JOIN public.papers_paper AS paper ON paper.id = l.paper_id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER listings_counted AFTER INSERT ON public.papers_listing
  REFERENCING NEW TABLE AS added_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_added();

CREATE FUNCTION public.papers_days_listings_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (-count(*) FILTER (WHERE l.announce_type IN {STREAM}))::int AS p,
                 (-count(*) FILTER (WHERE l.announce_type NOT IN {STREAM}))::int AS r
          FROM removed_listings AS l JOIN public.papers_paper AS paper ON paper.id = l.paper_id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER listings_uncounted AFTER DELETE ON public.papers_listing
  REFERENCING OLD TABLE AS removed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_removed();

-- A listing changed (its day, category or type): out of the old day, into the new.
CREATE FUNCTION public.papers_days_listings_changed() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 sum(l.sign * (l.announce_type IN {STREAM})::int)::int AS p,
                 sum(l.sign * (l.announce_type NOT IN {STREAM})::int)::int AS r
          FROM (SELECT category_id, date, announce_type, paper_id, 1 AS sign FROM after_listings
                UNION ALL
                SELECT category_id, date, announce_type, paper_id, -1 FROM before_listings) AS l
          JOIN public.papers_paper AS paper ON paper.id = l.paper_id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER listings_recounted AFTER UPDATE ON public.papers_listing
  REFERENCING OLD TABLE AS before_listings NEW TABLE AS after_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_changed();

-- Papers added after their listings (the bulk history's order) bring those listings in.
CREATE FUNCTION public.papers_days_papers_added() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (count(*) FILTER (WHERE l.announce_type IN {STREAM}))::int AS p,
                 (count(*) FILTER (WHERE l.announce_type NOT IN {STREAM}))::int AS r
          FROM added_papers AS paper JOIN public.papers_listing AS l ON l.paper_id = paper.id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_counted AFTER INSERT ON public.papers_paper
  REFERENCING NEW TABLE AS added_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_added();

-- Papers deleted before their listings take those listings out.
CREATE FUNCTION public.papers_days_papers_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (-count(*) FILTER (WHERE l.announce_type IN {STREAM}))::int AS p,
                 (-count(*) FILTER (WHERE l.announce_type NOT IN {STREAM}))::int AS r
          FROM removed_papers AS paper JOIN public.papers_listing AS l ON l.paper_id = paper.id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_uncounted AFTER DELETE ON public.papers_paper
  REFERENCING OLD TABLE AS removed_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_removed();

-- A paper hidden or shown again. (A trigger with transition tables cannot name its columns,
-- so every update of papers asks; the join finds nothing unless ``hidden`` changed.)
CREATE FUNCTION public.papers_days_papers_hidden() RETURNS trigger LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 sum(CASE WHEN now.hidden THEN -1 ELSE 1 END
                     * (l.announce_type IN {STREAM})::int)::int AS p,
                 sum(CASE WHEN now.hidden THEN -1 ELSE 1 END
                     * (l.announce_type NOT IN {STREAM})::int)::int AS r
          FROM after_papers AS now
          JOIN before_papers AS was ON was.id = now.id AND was.hidden <> now.hidden
          JOIN public.papers_listing AS l ON l.paper_id = now.id
          GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER papers_recounted AFTER UPDATE ON public.papers_paper
  REFERENCING OLD TABLE AS before_papers NEW TABLE AS after_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_hidden();

INSERT INTO public.papers_categoryday (category_id, date, papers, replacements)
SELECT l.category_id, l.date,
       count(*) FILTER (WHERE l.announce_type IN {STREAM}),
       count(*) FILTER (WHERE l.announce_type NOT IN {STREAM})
FROM public.papers_listing AS l JOIN public.papers_paper AS paper ON paper.id = l.paper_id
WHERE NOT paper.hidden
GROUP BY 1, 2;
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS papers_recounted ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_days_papers_hidden();
DROP TRIGGER IF EXISTS papers_uncounted ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_days_papers_removed();
DROP TRIGGER IF EXISTS papers_counted ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_days_papers_added();
DROP TRIGGER IF EXISTS listings_recounted ON public.papers_listing;
DROP FUNCTION IF EXISTS public.papers_days_listings_changed();
DROP TRIGGER IF EXISTS listings_uncounted ON public.papers_listing;
DROP FUNCTION IF EXISTS public.papers_days_listings_removed();
DROP TRIGGER IF EXISTS listings_counted ON public.papers_listing;
DROP FUNCTION IF EXISTS public.papers_days_listings_added();
DROP FUNCTION IF EXISTS public.papers_days_apply(bigint[], date[], int[], int[]);
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0019_listing_approximate_default")]

    operations = [
        migrations.CreateModel(
            name="CategoryDay",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("date", models.DateField()),
                ("papers", models.IntegerField(default=0)),
                ("replacements", models.IntegerField(default=0)),
                (
                    "category",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="papers.category",
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(
                        fields=("category", "date"),
                        include=("papers", "replacements"),
                        name="unique_category_day",
                    )
                ],
            },
        ),
        migrations.RunSQL(SQL, REVERSE_SQL),
    ]
