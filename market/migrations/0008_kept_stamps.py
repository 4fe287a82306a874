"""Stamps for kept market pages (peerrevenue.keep; the sequence and ``kept_stamp`` come from
papers 0010).

- ``market_term.stamp``: moved by every change of the row, trades included (supply, reserve,
  version), so a term's page and its row of the market table key on it.
- ``kept_stamp('terms')``: the term set, i.e. what highlighting and the matcher depend on
  (phrase, slug, aliases, status, and terms added or removed). A trade does not move it.
- ``kept_stamp('mentions')``: any mention or dividend recorded (an ingest's).
"""

from django.db import migrations, models

# History: the current definitions of these triggers and functions are in market/sql/stamps.sql
# (loaded by market 0013). A fresh database still runs this SQL as written, step by step: change
# the file and load it again in a new migration, never this.
SQL = r"""
INSERT INTO public.kept_stamp (name, value) VALUES
  ('terms', nextval('public.kept_stamp_seq')),
  ('mentions', nextval('public.kept_stamp_seq'));

CREATE TRIGGER term_restamp BEFORE INSERT OR UPDATE ON public.market_term
  FOR EACH ROW EXECUTE FUNCTION public.kept_restamp();

CREATE FUNCTION public.market_term_set_changed() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
  BEGIN
    PERFORM public.kept_bump('terms');
    RETURN NULL;
  END
  $fn$;
CREATE TRIGGER term_set_changed AFTER UPDATE ON public.market_term
  FOR EACH ROW
  WHEN ((OLD.phrase, OLD.slug, OLD.aliases, OLD.status)
        IS DISTINCT FROM (NEW.phrase, NEW.slug, NEW.aliases, NEW.status))
  EXECUTE FUNCTION public.market_term_set_changed();
CREATE TRIGGER term_set_grown_or_shrunk AFTER INSERT OR DELETE ON public.market_term
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('terms');

CREATE TRIGGER mentions_changed AFTER INSERT OR UPDATE OR DELETE ON public.market_mention
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('mentions');
CREATE TRIGGER dividends_changed AFTER INSERT OR UPDATE OR DELETE ON public.market_dividendevent
  FOR EACH STATEMENT EXECUTE FUNCTION public.kept_bump_statement('mentions');

UPDATE public.market_term SET stamp = 0;
"""

REVERSE_SQL = r"""
DROP TRIGGER IF EXISTS dividends_changed ON public.market_dividendevent;
DROP TRIGGER IF EXISTS mentions_changed ON public.market_mention;
DROP TRIGGER IF EXISTS term_set_grown_or_shrunk ON public.market_term;
DROP TRIGGER IF EXISTS term_set_changed ON public.market_term;
DROP FUNCTION IF EXISTS public.market_term_set_changed();
DROP TRIGGER IF EXISTS term_restamp ON public.market_term;
DELETE FROM public.kept_stamp WHERE name IN ('terms', 'mentions');
"""


class Migration(migrations.Migration):
    dependencies = [
        ("market", "0007_networth_snapshots_and_term_proposals"),
        ("papers", "0010_kept_stamps"),
    ]

    operations = [
        migrations.AddField(
            model_name="term",
            name="stamp",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        migrations.RunSQL(SQL, REVERSE_SQL),
    ]
