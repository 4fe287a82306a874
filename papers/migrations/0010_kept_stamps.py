"""Stamps for kept pages (peerrevenue.keep): the database itself gives a row a new stamp
whenever it, or what its pages show, changes, so that no code has to remember to.

- ``kept_stamp_seq``: one sequence every stamp is drawn from.
- ``papers_category.stamp``: the category, its listings and its listed papers.
- ``papers_paper.stamp``: the paper, its listings and its versions.
- ``kept_stamp``: named stamps of whole sets (``papers``: any paper, listing or category, for
  pages that show papers from everywhere, such as an author's). A row, not a sequence: a
  sequence moves before the change commits, and a reader in between would keep the old rows
  under the new stamp.

Row stamps are set by BEFORE triggers, so they commit with the change itself. Bulk writes
(the ingest's upserts, COPY) touch categories and papers once per statement, not per row.
"""

from django.db import migrations, models

# History: the current definitions of these triggers and functions are in papers/sql/stamps.sql
# (loaded by papers 0027). A fresh database still runs this SQL as written, step by step: change
# the file and load it again in a new migration, never this.
SQL = r"""
CREATE SEQUENCE public.kept_stamp_seq;

CREATE TABLE public.kept_stamp (
  name text PRIMARY KEY,
  value bigint NOT NULL
);
INSERT INTO public.kept_stamp (name, value) VALUES ('papers', nextval('public.kept_stamp_seq'));

CREATE FUNCTION public.kept_restamp() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    NEW.stamp := nextval('public.kept_stamp_seq');
    RETURN NEW;
  END
  $fn$;

CREATE FUNCTION public.kept_bump(stamp_name text) RETURNS void
  LANGUAGE sql
  AS $fn$
  UPDATE public.kept_stamp SET value = nextval('public.kept_stamp_seq') WHERE name = stamp_name
  $fn$;

CREATE FUNCTION public.kept_bump_statement() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    PERFORM public.kept_bump(TG_ARGV[0]);
    RETURN NULL;
  END
  $fn$;

CREATE TRIGGER category_restamp BEFORE INSERT OR UPDATE ON public.papers_category
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();
CREATE TRIGGER paper_restamp BEFORE INSERT OR UPDATE ON public.papers_paper
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();

-- A changed paper changes the pages of every category it is listed in.
CREATE FUNCTION public.papers_touch_categories() RETURNS trigger
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
CREATE TRIGGER papers_changed AFTER UPDATE ON public.papers_paper
  REFERENCING NEW TABLE AS changed_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_touch_categories();
CREATE TRIGGER papers_deleted AFTER DELETE ON public.papers_paper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');
CREATE TRIGGER papers_inserted AFTER INSERT ON public.papers_paper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');
CREATE TRIGGER categories_changed AFTER INSERT OR UPDATE OR DELETE ON public.papers_category
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('papers');

-- A listing added, changed or removed changes its category's pages and its paper's page.
CREATE FUNCTION public.listings_touch() RETURNS trigger
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
CREATE TRIGGER listings_inserted AFTER INSERT ON public.papers_listing
  REFERENCING NEW TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
CREATE TRIGGER listings_updated AFTER UPDATE ON public.papers_listing
  REFERENCING OLD TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
CREATE TRIGGER listings_updated_to AFTER UPDATE ON public.papers_listing
  REFERENCING NEW TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();
CREATE TRIGGER listings_deleted AFTER DELETE ON public.papers_listing
  REFERENCING OLD TABLE AS changed_listings
  FOR EACH STATEMENT EXECUTE FUNCTION public.listings_touch();

-- A version recorded changes its paper's page.
CREATE FUNCTION public.versions_touch() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    UPDATE public.papers_paper SET stamp = 0 WHERE id IN (SELECT paper_id FROM changed_versions);
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER versions_inserted AFTER INSERT ON public.papers_paperversion
  REFERENCING NEW TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();
CREATE TRIGGER versions_updated AFTER UPDATE ON public.papers_paperversion
  REFERENCING NEW TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();
CREATE TRIGGER versions_deleted AFTER DELETE ON public.papers_paperversion
  REFERENCING OLD TABLE AS changed_versions
  FOR EACH STATEMENT EXECUTE FUNCTION public.versions_touch();

UPDATE public.papers_category SET stamp = 0;
UPDATE public.papers_paper SET stamp = 0;
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS versions_deleted ON public.papers_paperversion;
DROP TRIGGER IF EXISTS versions_updated ON public.papers_paperversion;
DROP TRIGGER IF EXISTS versions_inserted ON public.papers_paperversion;
DROP FUNCTION IF EXISTS public.versions_touch();
DROP TRIGGER IF EXISTS listings_deleted ON public.papers_listing;
DROP TRIGGER IF EXISTS listings_updated_to ON public.papers_listing;
DROP TRIGGER IF EXISTS listings_updated ON public.papers_listing;
DROP TRIGGER IF EXISTS listings_inserted ON public.papers_listing;
DROP FUNCTION IF EXISTS public.listings_touch();
DROP TRIGGER IF EXISTS categories_changed ON public.papers_category;
DROP TRIGGER IF EXISTS papers_inserted ON public.papers_paper;
DROP TRIGGER IF EXISTS papers_deleted ON public.papers_paper;
DROP TRIGGER IF EXISTS papers_changed ON public.papers_paper;
DROP FUNCTION IF EXISTS public.papers_touch_categories();
DROP TRIGGER IF EXISTS paper_restamp ON public.papers_paper;
DROP TRIGGER IF EXISTS category_restamp ON public.papers_category;
DROP FUNCTION IF EXISTS public.kept_bump_statement();
DROP FUNCTION IF EXISTS public.kept_bump(text);
DROP FUNCTION IF EXISTS public.kept_restamp();
DROP TABLE IF EXISTS public.kept_stamp;
DROP SEQUENCE IF EXISTS public.kept_stamp_seq;
"""


class Migration(migrations.Migration):
    dependencies = [("papers", "0009_search_speed")]

    operations = [
        migrations.AddField(
            model_name="category",
            name="stamp",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.AddField(
            model_name="paper",
            name="stamp",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.RunSQL(SQL, REVERSE_SQL),
    ]
