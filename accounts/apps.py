from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from market import public_names
        from papers.streams import STREAM_SOURCES
        from peerrevenue import keep

        from .models import Preferences
        from .saved_searches import saved_searches_source
        from .verified_authors import FACT, FACT_SQL, verified_badges

        # A reader's front page also brings the papers their saved searches match.
        if saved_searches_source not in STREAM_SOURCES:
            STREAM_SOURCES.append(saved_searches_source)
        # Traders who hide their page are not named where anyone can see (market pages);
        # the stamp moves when one hides or shows it (accounts/sql/stamps.sql).
        public_names.private_traders(
            f"SELECT user_id FROM {Preferences._meta.db_table} WHERE NOT public_trader_page"
        )
        keep.fact(public_names.FACT, "SELECT value FROM kept_stamp WHERE name = 'traders'")
        # A paper page's verified authors: a hole filled under the claims and traders stamps,
        # read by every page so that whole anonymous pages are kept under it too.
        keep.fact(FACT, FACT_SQL, every_page=True)
        keep.filler("verified", verified_badges)
