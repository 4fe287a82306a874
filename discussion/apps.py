from django.apps import AppConfig


class DiscussionConfig(AppConfig):
    name = "discussion"
    verbose_name = "Discussion"

    def ready(self) -> None:
        from peerrevenue import keep

        from . import fillers

        # Moved by triggers (discussion/sql/stamps.sql) on any comment written, edited,
        # deleted, hidden or voted on: the threads and the "3 comments" counts are holes
        # filled under it, so no kept page holds them, and a whole anonymous page kept
        # under it is asked for afresh after any change.
        keep.fact(
            "comments", "SELECT value FROM kept_stamp WHERE name = 'comments'", every_page=True
        )
        keep.filler("thread", fillers.thread)
        keep.filler("comments", fillers.counts)
