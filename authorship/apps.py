from django.apps import AppConfig


class AuthorshipConfig(AppConfig):
    name = "authorship"
    verbose_name = "Authorship"
