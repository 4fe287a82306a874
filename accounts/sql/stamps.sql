-- The traders stamp (peerrevenue.keep; the sequence, kept_stamp and kept_bump_statement are
-- papers/sql/stamps.sql's).
--
-- Moves:
--   kept_stamp('traders')  whenever a trader hides or shows their trader page
--                          (accounts_preferences.public_trader_page), so every kept piece
--                          naming traders (a term page's holders and trades) changes on the
--                          next request, and whenever a trader is renamed (auth_user.username)
--
-- Row triggers with a WHEN: a saved preferences form that leaves the flag alone (the daily
-- digest's) moves nothing, and so renders no term page again.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- A stamp's value only has to be new; reloading this file must not move it.
INSERT INTO public.kept_stamp (name, value) VALUES ('traders', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

CREATE OR REPLACE TRIGGER traders_privacy_changed AFTER UPDATE OF public_trader_page
  ON public.accounts_preferences FOR EACH ROW
  WHEN (OLD.public_trader_page IS DISTINCT FROM NEW.public_trader_page)
  EXECUTE FUNCTION public.kept_bump_statement('traders');
-- A trader without preferences is public: a row that says otherwise, made or removed.
CREATE OR REPLACE TRIGGER traders_privacy_made AFTER INSERT ON public.accounts_preferences
  FOR EACH ROW WHEN (NOT NEW.public_trader_page)
  EXECUTE FUNCTION public.kept_bump_statement('traders');
CREATE OR REPLACE TRIGGER traders_privacy_removed AFTER DELETE ON public.accounts_preferences
  FOR EACH ROW WHEN (NOT OLD.public_trader_page)
  EXECUTE FUNCTION public.kept_bump_statement('traders');
-- auth_user has no stamp of its own: a renamed trader (the admin, update(), SQL) moves the
-- traders stamp too, since the same pieces name them.
CREATE OR REPLACE TRIGGER traders_renamed AFTER UPDATE ON public.auth_user
  FOR EACH ROW WHEN (OLD.username IS DISTINCT FROM NEW.username)
  EXECUTE FUNCTION public.kept_bump_statement('traders');
