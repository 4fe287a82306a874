-- Search: the SQL functions papers.fulltext names in the papers' generated search vector and
-- in the search index (papers 0008, 0025). Moves no stamp and fires on no table.
--
-- They are IMMUTABLE, as a generated column and an index expression require, and name
-- everything they call with its schema: PostgreSQL 17+ runs index builds and ANALYZE with a
-- search_path of pg_catalog only. Changing what one returns changes what the stored vectors
-- and the index should hold: the migration that reloads this file must then recompute the
-- column and rebuild the index, or old rows keep the old words.
--
-- The unaccent and pg_trgm extensions and the text search configuration english_unaccent
-- are schema, made by papers 0008.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- unaccent() is only STABLE (its rules file could change); pinning the dictionary makes it
-- safe to treat as IMMUTABLE, the usual way to index it.
CREATE OR REPLACE FUNCTION public.paper_unaccent(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$ SELECT public.unaccent('public.unaccent'::regdictionary, $1) $fn$;

-- Readable words of the typeset HTML: a formula's TeX annotation goes (its MathML symbols stay,
-- so "O(n log n)" reads as words, never "\log"), inline markup joins its text, other tags split
-- words, leftover TeX control words (a formula shown as source) go, entities are decoded.
-- papers/search/words.py does the same in Python, to mark the matched words.
CREATE OR REPLACE FUNCTION public.paper_search_text(html text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$
  SELECT pg_catalog.btrim(pg_catalog.regexp_replace(
    pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
    pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
      pg_catalog.regexp_replace(
        pg_catalog.regexp_replace(
          pg_catalog.regexp_replace(
            pg_catalog.regexp_replace(html, '<annotation[^>]*>[^<]*</annotation>', ' ', 'g'),
            '</?(a|abbr|b|em|i|s|small|span|strong|sub|sup|u)(\s[^>]*)?>', '', 'gi'),
          '<[^>]*>', ' ', 'g'),
        '\\[A-Za-z]+', ' ', 'g'),
      '&nbsp;', ' '), '&lt;', '<'), '&gt;', '>'), '&quot;', '"'), '&#x27;', ''''),
      '&#39;', ''''), '&amp;', '&'),
    '\s+', ' ', 'g'))
  $fn$;

-- Accent-folded names and title. No column uses it since papers 0009 (the fallback compares
-- the words of papers_nameword instead), but papers 0008's generated column names it, so a
-- fresh database still needs it while it migrates.
CREATE OR REPLACE FUNCTION public.paper_search_names(authors text, title_html text)
  RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $fn$
  SELECT pg_catalog.lower(public.paper_unaccent(
    coalesce(authors, '') || ' ' || coalesce(public.paper_search_text(title_html), '')))
  $fn$;

-- A paper's categories as text[], one of the columns of the search index (papers.fulltext.
-- CategoryCodes): GIN intersects a category's entries with a word's itself.
CREATE OR REPLACE FUNCTION public.paper_category_codes(categories jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT array(SELECT jsonb_array_elements_text(categories)) $$;
