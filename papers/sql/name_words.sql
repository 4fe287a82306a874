-- Name words: the distinct words of every paper's names and title (papers_nameword), which
-- the search's fallback for misspellings compares by trigrams instead of every paper's names.
--
-- Moves: the derived table papers_nameword, on papers_paper INSERT and UPDATE. It only ever
-- grows: a word no paper uses any more costs a row and finds nothing, so a delete or an edit
-- does not look for words to take away.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.
-- It needs search.sql's paper_unaccent and paper_search_text.

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
-- statement, not one per paper. ON CONFLICT DO NOTHING: two ingests adding the same word
-- at once both succeed.
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

CREATE OR REPLACE TRIGGER papers_nameword_insert AFTER INSERT ON papers_paper
  REFERENCING NEW TABLE AS new_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_nameword_inserted();
CREATE OR REPLACE TRIGGER papers_nameword_update AFTER UPDATE ON papers_paper
  REFERENCING OLD TABLE AS old_papers NEW TABLE AS new_papers
  FOR EACH STATEMENT EXECUTE FUNCTION public.papers_nameword_updated();
