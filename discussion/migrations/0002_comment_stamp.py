"""A comment's own stamp, moved by the database on any change of the comment (its votes too:
they move its score), so that a page of a thread is kept under the stamps of the comments it
shows rather than the whole thread's. Defined in discussion/sql/stamps.sql."""

from django.db import migrations, models

from peerrevenue.sql import RunSQLFile

REVERSE_SQL = "DROP TRIGGER IF EXISTS comment_restamp ON public.discussion_comment;"


class Migration(migrations.Migration):
    dependencies = [("discussion", "0001_discussion")]

    operations = [
        migrations.AddField(
            model_name="comment",
            name="stamp",
            field=models.BigIntegerField(default=0, editable=False),
        ),
        # Every comment there is gets a stamp of its own, as if just written.
        migrations.RunSQL(
            "UPDATE discussion_comment SET stamp = nextval('kept_stamp_seq')",
            migrations.RunSQL.noop,
        ),
        RunSQLFile("discussion", "stamps.sql"),
        migrations.RunSQL(migrations.RunSQL.noop, REVERSE_SQL),
    ]
