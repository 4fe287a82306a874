from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from papers.streams import STREAM_SOURCES

        from .saved_searches import saved_searches_source

        # A reader's front page also brings the papers their saved searches match.
        if saved_searches_source not in STREAM_SOURCES:
            STREAM_SOURCES.append(saved_searches_source)
