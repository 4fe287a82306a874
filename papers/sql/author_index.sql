-- The author index: one row per (shown paper, folded author name) in papers_authorship
-- (papers.Authorship), so an author's page reads its thirty rows and their count from a few
-- pages of the btree papers_authorship_page (papers 0021) instead of visiting every paper.
--
-- Moves: the derived table papers_authorship, on papers_paper INSERT, UPDATE and DELETE.
-- Inserted papers add a row per distinct folded name unless hidden; deleted papers take
-- theirs; an update rewrites the rows of the papers whose authors, submission time,
-- identifier or hidden flag changed (one join of the statement's transition tables).
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- Each author's name folded as the page compares them: unaccent(lower()) of the rendered
-- name, else the raw one. unaccent is only STABLE (its dictionary could change), so the
-- dictionary is named and the function declared IMMUTABLE, the usual way to index it; the
-- rows must be rewritten if the unaccent rules ever change.
CREATE OR REPLACE FUNCTION public.paper_author_keys(authors jsonb) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$
  SELECT coalesce(array_agg(public.unaccent('public.unaccent'::regdictionary,
                    lower(coalesce(nullif(author->>'name_text', ''), author->>'name')))), '{}')
  FROM jsonb_array_elements(
    CASE WHEN jsonb_typeof(authors) = 'array' THEN authors ELSE '[]'::jsonb END) AS author
  WHERE jsonb_typeof(author) = 'object'
  $fn$;

CREATE OR REPLACE FUNCTION public.papers_authorship_rows(ids bigint[]) RETURNS void
  LANGUAGE sql AS $fn$
  INSERT INTO public.papers_authorship (paper_id, name, submitted_at, arxiv_id)
  SELECT DISTINCT p.id, key, p.submitted_at, p.arxiv_id
  FROM public.papers_paper AS p, unnest(public.paper_author_keys(p.authors)) AS key
  WHERE p.id = ANY(ids) AND NOT p.hidden AND key IS NOT NULL
  $fn$;

CREATE OR REPLACE FUNCTION public.papers_authorship_added() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  BEGIN
    INSERT INTO public.papers_authorship (paper_id, name, submitted_at, arxiv_id)
    SELECT DISTINCT p.id, key, p.submitted_at, p.arxiv_id
    FROM added_papers AS p, unnest(public.paper_author_keys(p.authors)) AS key
    WHERE NOT p.hidden AND key IS NOT NULL;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER papers_authorship_added AFTER INSERT ON public.papers_paper
  REFERENCING NEW TABLE AS added_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_added();

CREATE OR REPLACE FUNCTION public.papers_authorship_changed() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
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
CREATE OR REPLACE TRIGGER papers_authorship_changed AFTER UPDATE ON public.papers_paper
  REFERENCING OLD TABLE AS before_papers NEW TABLE AS after_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_changed();

CREATE OR REPLACE FUNCTION public.papers_authorship_removed() RETURNS trigger
  LANGUAGE plpgsql AS $fn$
  BEGIN
    DELETE FROM public.papers_authorship WHERE paper_id IN (SELECT id FROM removed_papers);
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER papers_authorship_removed AFTER DELETE ON public.papers_paper
  REFERENCING OLD TABLE AS removed_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_authorship_removed();
