"""Thin receivers: they only hand over to domain functions."""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import receiver


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="market_open_account")
def open_account_for_new_user(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    # create_user, create_superuser (and so createsuperuser) and admin "add user" all save
    # through the model, so every new user gets an account and the starting grant. Fixtures
    # loaded raw carry their own rows.
    if created and not raw:
        from .trading import open_account

        open_account(user=instance)
