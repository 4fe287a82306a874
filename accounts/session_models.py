"""The session table: Django's columns and the id of the user the session signs in."""

from __future__ import annotations

from importlib import import_module

from django.conf import settings
from django.contrib.sessions.base_session import AbstractBaseSession
from django.db import models


class Session(AbstractBaseSession):
    """A browser's session. ``user`` is what its data says (``auth.SESSION_KEY``), kept as a
    column so that one statement reads the session, its user and their news
    (``accounts.sessions``); deleting a user signs them out everywhere."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
    )

    class Meta:
        db_table = "accounts_session"
        verbose_name = "session"

    @classmethod
    def get_session_store_class(cls):
        # The configured engine's store (accounts.sessions), found the way Django's session
        # middleware and clearsessions find it: that module reads this table, so importing it
        # here would make each module need the other.
        return import_module(settings.SESSION_ENGINE).SessionStore
