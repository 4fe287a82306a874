"""Thin receivers: they only hand over to domain functions.

Term changes reach the caches here (the matcher, the tickers and the cached pages all key on
the version that ``highlighting.terms_changed`` bumps), so models need not import the code that
caches them.
"""

from __future__ import annotations

from django.conf import settings
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from papers.signals import listings_announced

from . import highlighting, proposals, trends
from .cash import open_account
from .dividends import pay_dividends_for_day
from .models import Term, terms_updated


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="market_open_account")
def open_account_for_new_user(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    # create_user, create_superuser (and so createsuperuser) and admin "add user" all save
    # through the model, so every new user gets an account and the starting grant. Fixtures
    # loaded raw carry their own rows.
    if created and not raw:
        open_account(user=instance)


@receiver(post_save, sender=Term, dispatch_uid="market_term_saved")
@receiver(post_delete, sender=Term, dispatch_uid="market_term_deleted")
@receiver(terms_updated, dispatch_uid="market_terms_updated")
def refresh_term_caches(**kwargs) -> None:
    # Saving, deleting, halting, relisting or delisting a term changes what is highlighted,
    # what the matcher pays for, and every cached page that shows either.
    highlighting.terms_changed()


@receiver(post_save, sender=Term, dispatch_uid="market_term_closes_proposals")
def close_covered_proposals(sender, instance: Term, raw: bool = False, **kwargs) -> None:
    # Listed from the candidate page or added by hand, a term that covers a trader's proposal
    # tells them (once: the proposal is closed by a conditional update).
    if not raw:
        proposals.mark_listed(term=instance)


@receiver(listings_announced, dispatch_uid="market_pay_announced_dividends")
def pay_announced_dividends(sender, *, category, date, **kwargs) -> None:
    # Sent by the ingest worker after the day's write committed. Paying here, synchronously,
    # means the digests queued after it report the day's dividends; payouts are idempotent per
    # (term, paper), so a retried or duplicated announcement pays nothing twice.
    pay_dividends_for_day(category=category, date=date)
    # The new listings start fresh mention trends: count them here, in the worker, rather than
    # on the first reader's request.
    trends.count_all_listed()
