-- Day counts: each category's announcement days with their counts (papers_categoryday,
-- papers.CategoryDay), so the category page's navigation and length read a few rows instead
-- of a GROUP BY over the category's whole history.
--
-- Moves: the derived table papers_categoryday, on papers_listing INSERT, UPDATE and DELETE
-- and papers_paper INSERT, UPDATE (hidden) and DELETE. One row per (category, day): visible
-- new and cross-listed papers ('new', 'cross': Listing.STREAM_TYPES), and visible
-- replacements.
--
-- - A listing counts while it exists and its paper does and is not hidden. It is counted by
--   whichever of the two inserts comes second (the daily ingest writes papers first, the bulk
--   history writes listings first; the foreign keys are deferred), and taken away by whichever
--   delete comes first (Django deletes a paper's listings before the paper). The join to the
--   paper in each trigger is what makes each listing count exactly once.
-- - Hiding or showing a paper moves its listings' days by one each.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- Deltas are applied in one upsert, in (category, day) order so that two writers lock the
-- rows in the same order (no deadlock between two ingests); a row that falls to nothing is
-- deleted (a day with only hidden papers is no announcement day on the page). A negative
-- delta with no row to take from (a category's days deleted before its listings) inserts
-- nothing that survives the same call.
CREATE OR REPLACE FUNCTION public.papers_days_apply(c bigint[], d date[], p int[], r int[])
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

-- Listings added (the trigger's argument '1') or deleted ('-1'): counted where their paper is
-- there and shown. Both triggers name their transition table ``moved_listings``, so one
-- function serves the two.
CREATE OR REPLACE FUNCTION public.papers_days_listings_moved() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  DECLARE
    direction int := TG_ARGV[0]::int;
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (direction * count(*) FILTER (WHERE l.announce_type IN ('new', 'cross')))::int
                   AS p,
                 (direction * count(*) FILTER (WHERE l.announce_type NOT IN ('new', 'cross')))::int
                   AS r
          FROM moved_listings AS l JOIN public.papers_paper AS paper ON paper.id = l.paper_id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER listings_counted AFTER INSERT ON public.papers_listing
  REFERENCING NEW TABLE AS moved_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_moved('1');
CREATE OR REPLACE TRIGGER listings_uncounted AFTER DELETE ON public.papers_listing
  REFERENCING OLD TABLE AS moved_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_moved('-1');

-- A listing changed (its day, category or type): out of the old day, into the new.
CREATE OR REPLACE FUNCTION public.papers_days_listings_changed() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 sum(l.sign * (l.announce_type IN ('new', 'cross'))::int)::int AS p,
                 sum(l.sign * (l.announce_type NOT IN ('new', 'cross'))::int)::int AS r
          FROM (SELECT category_id, date, announce_type, paper_id, 1 AS sign FROM after_listings
                UNION ALL
                SELECT category_id, date, announce_type, paper_id, -1 FROM before_listings) AS l
          JOIN public.papers_paper AS paper ON paper.id = l.paper_id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER listings_recounted AFTER UPDATE ON public.papers_listing
  REFERENCING OLD TABLE AS before_listings NEW TABLE AS after_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_listings_changed();

-- Papers added after their listings (the bulk history's order) bring those listings in ('1');
-- papers deleted before their listings take those listings out ('-1'). As above, one function
-- for both: the transition table is ``moved_papers`` in each.
CREATE OR REPLACE FUNCTION public.papers_days_papers_moved() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  DECLARE
    direction int := TG_ARGV[0]::int;
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 (direction * count(*) FILTER (WHERE l.announce_type IN ('new', 'cross')))::int
                   AS p,
                 (direction * count(*) FILTER (WHERE l.announce_type NOT IN ('new', 'cross')))::int
                   AS r
          FROM moved_papers AS paper JOIN public.papers_listing AS l ON l.paper_id = paper.id
          WHERE NOT paper.hidden GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER papers_counted AFTER INSERT ON public.papers_paper
  REFERENCING NEW TABLE AS moved_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_moved('1');
CREATE OR REPLACE TRIGGER papers_uncounted AFTER DELETE ON public.papers_paper
  REFERENCING OLD TABLE AS moved_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_moved('-1');

-- The four functions the triggers above called before they shared two (papers migration
-- 0029); nothing calls them any more.
DROP FUNCTION IF EXISTS public.papers_days_listings_added();
DROP FUNCTION IF EXISTS public.papers_days_listings_removed();
DROP FUNCTION IF EXISTS public.papers_days_papers_added();
DROP FUNCTION IF EXISTS public.papers_days_papers_removed();

-- A paper hidden or shown again. (A trigger with transition tables cannot name its columns,
-- so every update of papers asks; the join finds nothing unless ``hidden`` changed.)
CREATE OR REPLACE FUNCTION public.papers_days_papers_hidden() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  BEGIN
    PERFORM public.papers_days_apply(array_agg(c), array_agg(d), array_agg(p), array_agg(r))
    FROM (SELECT l.category_id AS c, l.date AS d,
                 sum(CASE WHEN now.hidden THEN -1 ELSE 1 END
                     * (l.announce_type IN ('new', 'cross'))::int)::int AS p,
                 sum(CASE WHEN now.hidden THEN -1 ELSE 1 END
                     * (l.announce_type NOT IN ('new', 'cross'))::int)::int AS r
          FROM after_papers AS now
          JOIN before_papers AS was ON was.id = now.id AND was.hidden <> now.hidden
          JOIN public.papers_listing AS l ON l.paper_id = now.id
          GROUP BY 1, 2) AS delta;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER papers_recounted AFTER UPDATE ON public.papers_paper
  REFERENCING OLD TABLE AS before_papers NEW TABLE AS after_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_days_papers_hidden();
