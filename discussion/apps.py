from django.apps import AppConfig


class DiscussionConfig(AppConfig):
    name = "discussion"
    verbose_name = "Discussion"

    def ready(self) -> None:
        from peerrevenue import keep

        from . import fillers

        # Moved by triggers (discussion/sql/stamps.sql) on any comment written, edited,
        # deleted, hidden or voted on, and any suspension; with the traders stamp, which a
        # writer's rename moves (accounts/sql/stamps.sql): the threads and the "3 comments"
        # counts are holes filled under it, so no kept page holds them, and a whole anonymous
        # page kept under it is asked for afresh after any change. (Both are drawn from one
        # sequence, so their sum moves whenever either does.)
        keep.fact(
            "comments",
            "SELECT sum(value)::bigint FROM kept_stamp WHERE name IN ('comments', 'traders')",
            every_page=True,
        )
        keep.filler("thread", fillers.thread)
        keep.filler("term-thread", fillers.term_thread)
        keep.filler("comments", fillers.counts)
