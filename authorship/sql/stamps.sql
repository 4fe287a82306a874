-- The claims stamp (peerrevenue.keep; the sequence, kept_stamp and kept_bump_statement are
-- papers/sql/stamps.sql's).
--
-- Moves:
--   kept_stamp('claims')  whenever the set of approved claims changes: a claim approved, an
--                         approved one refused or withdrawn, or its reader or paper changed
--                         (the admin, update(), SQL), so the verified authors a paper page
--                         shows and a term page's open positions change on the next request
--
-- Row triggers with a WHEN: a pending claim made, withdrawn or refused, and an address
-- confirmed, move nothing, so no page is rendered again for them.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- A stamp's value only has to be new; reloading this file must not move it.
INSERT INTO public.kept_stamp (name, value) VALUES ('claims', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

CREATE OR REPLACE TRIGGER claims_approved AFTER INSERT ON public.authorship_claim
  FOR EACH ROW WHEN (NEW.status = 'approved')
  EXECUTE FUNCTION public.kept_bump_statement('claims');
CREATE OR REPLACE TRIGGER claims_decided AFTER UPDATE ON public.authorship_claim
  FOR EACH ROW WHEN (
    (OLD.status = 'approved' OR NEW.status = 'approved')
    AND (OLD.status, OLD.user_id, OLD.paper_id) IS DISTINCT FROM
        (NEW.status, NEW.user_id, NEW.paper_id)
  )
  EXECUTE FUNCTION public.kept_bump_statement('claims');
CREATE OR REPLACE TRIGGER claims_removed AFTER DELETE ON public.authorship_claim
  FOR EACH ROW WHEN (OLD.status = 'approved')
  EXECUTE FUNCTION public.kept_bump_statement('claims');
