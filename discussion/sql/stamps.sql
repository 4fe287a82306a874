-- Stamps of the discussions (peerrevenue.keep; the sequence, kept_stamp, kept_restamp and
-- kept_bump are papers/sql/stamps.sql's).
--
-- Moves:
--   discussion_thread.stamp          any change of the thread's comments or their votes
--   discussion_thread.comment_count  the comments neither deleted nor hidden
--   discussion_comment.score         the comment's votes
--   discussion_comment.stamp         any change of the comment (its votes too)
--   kept_stamp('comments')           any of the above (the threads and counts on every page),
--                                    and any suspension (a suspended reader's page has no form)
--
-- Counts are moved by the change's own rows (+ new, - old), never recounted: two comments
-- committed at once each add theirs to the row the other just updated (a recount would read
-- its statement's snapshot, which lacks the other's comment, and lose it).
--
-- Loaded by a migration (peerrevenue.sql); idempotent, so loading it again changes nothing.

INSERT INTO public.kept_stamp (name, value) VALUES
  ('comments', nextval('public.kept_stamp_seq'))
ON CONFLICT (name) DO NOTHING;

CREATE OR REPLACE TRIGGER thread_restamp BEFORE INSERT OR UPDATE ON public.discussion_thread
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();
CREATE OR REPLACE TRIGGER comment_restamp BEFORE INSERT OR UPDATE ON public.discussion_comment
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();

-- A statement's comments: each thread's count moved by what the statement changed, its stamp
-- moved (the BEFORE trigger draws it), and the every-page stamp moved once.
CREATE OR REPLACE FUNCTION public.discussion_comments_touch() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      UPDATE public.discussion_thread AS t SET comment_count = t.comment_count + d.n
        FROM (SELECT thread_id, count(*) FILTER (WHERE deleted_at IS NULL AND hidden_at IS NULL) AS n
              FROM new_comments GROUP BY thread_id) AS d
        WHERE t.id = d.thread_id;
    ELSIF TG_OP = 'DELETE' THEN
      UPDATE public.discussion_thread AS t SET comment_count = t.comment_count - d.n
        FROM (SELECT thread_id, count(*) FILTER (WHERE deleted_at IS NULL AND hidden_at IS NULL) AS n
              FROM old_comments GROUP BY thread_id) AS d
        WHERE t.id = d.thread_id;
    ELSE
      UPDATE public.discussion_thread AS t SET comment_count = t.comment_count + d.n
        FROM (SELECT thread_id, sum(n) AS n FROM (
                SELECT thread_id, CASE WHEN deleted_at IS NULL AND hidden_at IS NULL THEN 1 ELSE 0 END AS n
                  FROM new_comments
                UNION ALL
                SELECT thread_id, CASE WHEN deleted_at IS NULL AND hidden_at IS NULL THEN -1 ELSE 0 END
                  FROM old_comments) AS each_row
              GROUP BY thread_id) AS d
        WHERE t.id = d.thread_id;
    END IF;
    PERFORM public.kept_bump('comments');
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER comments_added AFTER INSERT ON public.discussion_comment
  REFERENCING NEW TABLE AS new_comments
  FOR EACH STATEMENT EXECUTE FUNCTION public.discussion_comments_touch();
CREATE OR REPLACE TRIGGER comments_changed AFTER UPDATE ON public.discussion_comment
  REFERENCING OLD TABLE AS old_comments NEW TABLE AS new_comments
  FOR EACH STATEMENT EXECUTE FUNCTION public.discussion_comments_touch();
CREATE OR REPLACE TRIGGER comments_removed AFTER DELETE ON public.discussion_comment
  REFERENCING OLD TABLE AS old_comments
  FOR EACH STATEMENT EXECUTE FUNCTION public.discussion_comments_touch();

-- A statement's votes: each comment's score moved by them, which (an update of the comments)
-- moves their threads' stamps and the every-page stamp above.
CREATE OR REPLACE FUNCTION public.discussion_votes_touch() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    IF TG_OP = 'INSERT' THEN
      UPDATE public.discussion_comment AS c SET score = c.score + d.n
        FROM (SELECT comment_id, count(*) AS n FROM new_votes GROUP BY comment_id) AS d
        WHERE c.id = d.comment_id;
    ELSE
      UPDATE public.discussion_comment AS c SET score = c.score - d.n
        FROM (SELECT comment_id, count(*) AS n FROM old_votes GROUP BY comment_id) AS d
        WHERE c.id = d.comment_id;
    END IF;
    RETURN NULL;
  END
  $fn$;
CREATE OR REPLACE TRIGGER votes_added AFTER INSERT ON public.discussion_vote
  REFERENCING NEW TABLE AS new_votes
  FOR EACH STATEMENT EXECUTE FUNCTION public.discussion_votes_touch();
CREATE OR REPLACE TRIGGER votes_removed AFTER DELETE ON public.discussion_vote
  REFERENCING OLD TABLE AS old_votes
  FOR EACH STATEMENT EXECUTE FUNCTION public.discussion_votes_touch();

CREATE OR REPLACE TRIGGER suspensions_changed
  AFTER INSERT OR UPDATE OR DELETE ON public.discussion_suspension
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('comments');
