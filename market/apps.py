from django.apps import AppConfig


class MarketConfig(AppConfig):
    name = "market"
    verbose_name = "Market"

    def ready(self) -> None:
        from . import signals  # noqa: F401  (connects the receivers)
