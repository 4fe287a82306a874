-- Stamps of the library's pieces (peerrevenue.keep; the sequence, kept_stamp and
-- kept_bump_statement are papers/sql/stamps.sql's).
--
-- Moves:
--   kept_stamp('saves')            any save or unsave (the stars and counts on every page)
--   kept_stamp('recommendations')  any stored score or similar list
--   kept_stamp('notes')            any private note written or removed (its reader's paper page)
--   kept_stamp('hot')              any refresh of the hot lists (library_hotpaper, and
--                                  library_hotranking: a ranking that found nothing stores no
--                                  HotPaper row, yet the "being worked out" piece must give way)
--
-- Statement triggers: a refresh or a fit writes many rows in one statement and moves its
-- stamp once.
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

-- A stamp's value only has to be new; reloading this file must not move it.
INSERT INTO public.kept_stamp (name, value) VALUES
  ('saves', nextval('public.kept_stamp_seq')),
  ('recommendations', nextval('public.kept_stamp_seq')),
  ('hot', nextval('public.kept_stamp_seq')),
  ('notes', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

-- Only INSERT and DELETE: the stars and counts show whether a paper is saved, which an update
-- of a save (its read mark) does not change.
CREATE OR REPLACE TRIGGER saves_changed AFTER INSERT OR DELETE ON public.library_savedpaper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('saves');
CREATE OR REPLACE TRIGGER recommendations_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.library_recommendation
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('recommendations');
CREATE OR REPLACE TRIGGER similar_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.library_similarlist
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('recommendations');

CREATE OR REPLACE TRIGGER hot_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.library_hotpaper
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('hot');
CREATE OR REPLACE TRIGGER hot_ranked
  AFTER INSERT OR UPDATE OR DELETE ON public.library_hotranking
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('hot');

CREATE OR REPLACE TRIGGER notes_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.library_note
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('notes');
