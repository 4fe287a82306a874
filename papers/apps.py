from django.apps import AppConfig


class PapersConfig(AppConfig):
    name = "papers"
    verbose_name = "Papers"

    def ready(self) -> None:
        from . import signals

        signals.connect()
