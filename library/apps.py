from django.apps import AppConfig


class LibraryConfig(AppConfig):
    name = "library"
    verbose_name = "Library"

    def ready(self) -> None:
        from peerrevenue import keep

        from . import fillers

        # Moved by triggers (library/sql/stamps.sql) on any save or unsave, and on any
        # stored recommendation or similar list: the stars, saved counts and "for you" and
        # "similar" sections are holes filled under these, so kept pages never hold them.
        keep.fact("saves", "SELECT value FROM kept_stamp WHERE name = 'saves'", every_page=True)
        keep.fact(
            "recommendations",
            "SELECT value FROM kept_stamp WHERE name = 'recommendations'",
            every_page=True,
        )
        # Moved by each refresh of the stored hot lists (library/sql/stamps.sql).
        keep.fact("hot", "SELECT value FROM kept_stamp WHERE name = 'hot'")
        # A reader's library and fit, as one value: moved by each save, unsave and tag change
        # (``changes``) and by each refit of their picks.
        keep.fact(
            "shelf",
            "SELECT concat_ws(':', changes, fitted_changes, fitted_model, fitted_at)"
            " FROM library_shelf WHERE user_id = %s",
            arguments=1,
        )
        keep.filler("saved", fillers.saved_stars)
        keep.filler("for-you", fillers.for_you)
        keep.filler("similar", fillers.similar)
        # Moved by any note written or removed (library/sql/stamps.sql): the paper page's note
        # is a hole filled per reader under it.
        keep.fact("notes", "SELECT value FROM kept_stamp WHERE name = 'notes'", every_page=True)
        keep.filler("note", fillers.note)
