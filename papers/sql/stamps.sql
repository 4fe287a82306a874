-- Stamps: the database gives a row a new stamp whenever it, or what its pages show, changes,
-- so that no code has to remember to (peerrevenue.keep). Every write counts: the ORM,
-- QuerySet.update(), the admin, the ingest's COPY, psql.
--
-- Moves:
--   papers_category.stamp   the category, its listings and its listed papers
--   papers_paper.stamp      the paper, its listings and its versions
--   kept_stamp('papers')    any paper, listing or category (pages that show papers from
--                           everywhere, such as an author's)
--   kept_stamp('research')  any term research count (papers_mentionmonth)
--
-- The machinery other apps' stamp files use is here too: kept_restamp (a row's own stamp),
-- kept_bump / kept_bump_statement (a named stamp). The sequence kept_stamp_seq and the table
-- kept_stamp are schema, made by papers 0010. A named stamp is a row, not a sequence: a
-- sequence moves before the change commits, and a reader in between would keep the old rows
-- under the new stamp; the row's update commits with the change.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- A stamp's value only has to be new; reloading this file must not move it.
INSERT INTO public.kept_stamp (name, value) VALUES
  ('papers', nextval('public.kept_stamp_seq')),
  ('research', nextval('public.kept_stamp_seq')),
  ('categories', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

-- Row stamps are set by BEFORE triggers, so they commit with the change itself.
CREATE OR REPLACE FUNCTION public.kept_restamp() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    NEW.stamp := nextval('public.kept_stamp_seq');
    RETURN NEW;
  END
  $fn$;

CREATE OR REPLACE FUNCTION public.kept_bump(stamp_name text) RETURNS void
  LANGUAGE sql
  AS $fn$
  UPDATE public.kept_stamp SET value = nextval('public.kept_stamp_seq') WHERE name = stamp_name
  $fn$;

-- A statement trigger's function: the stamp to move is the trigger's argument.
CREATE OR REPLACE FUNCTION public.kept_bump_statement() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    PERFORM public.kept_bump(TG_ARGV[0]);
    RETURN NULL;
  END
  $fn$;

CREATE OR REPLACE TRIGGER category_restamp BEFORE INSERT OR UPDATE ON public.papers_category
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();
CREATE OR REPLACE TRIGGER paper_restamp BEFORE INSERT OR UPDATE ON public.papers_paper
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();

-- A changed paper changes the pages of every category it is listed in. Bulk writes (the
-- ingest's upserts, COPY) touch categories and papers once per statement, not per row:
-- "SET stamp = 0" fires the category's BEFORE trigger, which draws the real stamp.
CREATE OR REPLACE FUNCTION public.papers_touch_categories() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    UPDATE public.papers_category SET stamp = 0
    WHERE id IN (SELECT l.category_id FROM public.papers_listing AS l
                 WHERE l.paper_id IN (SELECT id FROM changed_papers));
    PERFORM public.kept_bump('papers');
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER papers_changed AFTER UPDATE ON public.papers_paper
  REFERENCING NEW TABLE AS changed_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_touch_categories();
CREATE OR REPLACE TRIGGER papers_deleted AFTER DELETE ON public.papers_paper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');
CREATE OR REPLACE TRIGGER papers_inserted AFTER INSERT ON public.papers_paper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');
CREATE OR REPLACE TRIGGER categories_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.papers_category
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');
-- The categories stamp: every kept piece that names categories without being keyed by their
-- rows' stamps (a paper's page: its subjects and listings) changes when one is added, removed
-- or renamed. A row trigger with a WHEN, so that a stamp-only update (the listings' triggers
-- set `stamp = 0` on every listing) moves nothing.
CREATE OR REPLACE TRIGGER categories_renamed AFTER UPDATE ON public.papers_category
  FOR EACH ROW
  WHEN ((OLD.code, OLD.name, OLD.archive_code, OLD.archive_name)
        IS DISTINCT FROM (NEW.code, NEW.name, NEW.archive_code, NEW.archive_name))
  EXECUTE FUNCTION public.kept_bump_statement('categories');
CREATE OR REPLACE TRIGGER categories_added_or_removed
  AFTER INSERT OR DELETE ON public.papers_category
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('categories');

-- A listing added, changed or removed changes its category's pages and its paper's page.
CREATE OR REPLACE FUNCTION public.listings_touch() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    UPDATE public.papers_category SET stamp = 0
    WHERE id IN (SELECT category_id FROM changed_listings);
    UPDATE public.papers_paper SET stamp = 0
    WHERE id IN (SELECT paper_id FROM changed_listings);
    PERFORM public.kept_bump('papers');
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER listings_inserted AFTER INSERT ON public.papers_listing
  REFERENCING NEW TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
-- An update is told twice, old rows then new ones: a listing moved to another category
-- changes the pages of both (a trigger's transition table is either old or new, not both
-- under one name).
CREATE OR REPLACE TRIGGER listings_updated AFTER UPDATE ON public.papers_listing
  REFERENCING OLD TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
CREATE OR REPLACE TRIGGER listings_updated_to AFTER UPDATE ON public.papers_listing
  REFERENCING NEW TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
CREATE OR REPLACE TRIGGER listings_deleted AFTER DELETE ON public.papers_listing
  REFERENCING OLD TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();

-- A version recorded changes its paper's page.
CREATE OR REPLACE FUNCTION public.versions_touch() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    UPDATE public.papers_paper SET stamp = 0 WHERE id IN (SELECT paper_id FROM changed_versions);
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER versions_inserted AFTER INSERT ON public.papers_paperversion
  REFERENCING NEW TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();
CREATE OR REPLACE TRIGGER versions_updated AFTER UPDATE ON public.papers_paperversion
  REFERENCING NEW TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();
CREATE OR REPLACE TRIGGER versions_deleted AFTER DELETE ON public.papers_paperversion
  REFERENCING OLD TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();

-- The term research counts (papers.MentionMonth): any statement that writes them, so a term
-- page shows a recount the worker made later at once.
CREATE OR REPLACE TRIGGER mention_months_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.papers_mentionmonth
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('research');
