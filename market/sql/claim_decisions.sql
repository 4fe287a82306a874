-- A claim's approval and the dividends it stops (market/dividends.py, the rule that verified
-- authors are not paid for their own papers).
--
-- A payout reads a paper's verified authors after locking the paper's row FOR SHARE, and holds
-- that lock until it commits. Approving a claim (however it is written: the admin's action,
-- its form, update(), SQL) first locks the same row against it, so an approval and a payout of
-- the same paper never overlap: either the approval commits first and the payout withholds the
-- author's shares, or the payout commits first and the approval waits for it. The decision is
-- dated when it has the lock (clock_timestamp(), not the statement's or the caller's clock), so
-- a dividend recorded before a claim's decided_at was paid before the claim stood, and the
-- ledger check (market/ledger.py) can tell the two orders apart.
--
-- Lock order: a payout takes term → papers (share) → accounts → issuance; an approval takes
-- the claim → its paper. Neither waits for what the other takes first.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

CREATE OR REPLACE FUNCTION public.claim_approval_waits_for_payouts() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM public.papers_paper WHERE id = NEW.paper_id FOR NO KEY UPDATE;
    NEW.decided_at := clock_timestamp();
    RETURN NEW;
END;
$$;

CREATE OR REPLACE TRIGGER claim_made_approved_waits BEFORE INSERT ON public.authorship_claim
  FOR EACH ROW WHEN (NEW.status = 'approved')
  EXECUTE FUNCTION public.claim_approval_waits_for_payouts();
CREATE OR REPLACE TRIGGER claim_approved_waits BEFORE UPDATE ON public.authorship_claim
  FOR EACH ROW WHEN (NEW.status = 'approved' AND OLD.status IS DISTINCT FROM 'approved')
  EXECUTE FUNCTION public.claim_approval_waits_for_payouts();
