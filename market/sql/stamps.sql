-- Stamps of the market (peerrevenue.keep; the sequence, kept_stamp and the functions
-- kept_restamp, kept_bump, kept_bump_statement are papers/sql/stamps.sql's).
--
-- Moves:
--   market_term.stamp       every change of the row, trades included (supply, reserve,
--                           version): a term's page and its row of the market table key on it
--   kept_stamp('terms')     the term set, i.e. what highlighting and the matcher depend on
--                           (phrase, slug, aliases, status, and terms added or removed); a
--                           trade does not move it
--   kept_stamp('mentions')  any mention or dividend recorded (an ingest's)
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- A stamp's value only has to be new; reloading this file must not move it.
INSERT INTO public.kept_stamp (name, value) VALUES
  ('terms', nextval('public.kept_stamp_seq')),
  ('mentions', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

-- BEFORE, so the new stamp commits with the change itself (the trade function's UPDATE
-- included).
CREATE OR REPLACE TRIGGER term_restamp BEFORE INSERT OR UPDATE ON public.market_term
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();

-- A row trigger with a WHEN, so that a trade (an UPDATE of supply, reserve and version) moves
-- no term-set stamp and takes no lock of its kept_stamp row, on which every trade of every
-- term would otherwise queue until its commit.
CREATE OR REPLACE FUNCTION public.market_term_set_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    PERFORM public.kept_bump('terms');
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER term_set_changed AFTER UPDATE ON public.market_term
  FOR EACH ROW
  WHEN ((OLD.phrase, OLD.slug, OLD.aliases, OLD.status)
        IS DISTINCT FROM (NEW.phrase, NEW.slug, NEW.aliases, NEW.status))
  EXECUTE FUNCTION public.market_term_set_changed();
CREATE OR REPLACE TRIGGER term_set_grown_or_shrunk AFTER INSERT OR DELETE ON public.market_term
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('terms');

CREATE OR REPLACE TRIGGER mentions_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.market_mention
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('mentions');
CREATE OR REPLACE TRIGGER dividends_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.market_dividendevent
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('mentions');
