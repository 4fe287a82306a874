from django.apps import AppConfig


class AuthorshipConfig(AppConfig):
    name = "authorship"
    verbose_name = "Authorship"

    def ready(self) -> None:
        from peerrevenue import keep

        # Moved by authorship/sql/stamps.sql whenever the set of approved claims changes:
        # pieces showing verified authors (a term page's open positions) are kept under it.
        keep.fact("claims", "SELECT value FROM kept_stamp WHERE name = 'claims'")
