"""Thin receivers: they only hand over to domain functions.

Term changes reach kept pages by themselves: the database moves the term-set stamp
(``peerrevenue.keep``), so nothing here has to tell the caches.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from papers.signals import history_stored, listings_announced
from peerrevenue.queueing import send_from_request

from . import highlighted_html, notices, proposals, research, tasks, trends
from .cash import open_account
from .dividends import pay_dividends_for_day
from .models import Term

logger = logging.getLogger(__name__)


@receiver(post_save, sender=settings.AUTH_USER_MODEL, dispatch_uid="market_open_account")
def open_account_for_new_user(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    # create_user, create_superuser (and so createsuperuser) and admin "add user" all save
    # through the model, so every new user gets an account and the starting grant. Fixtures
    # loaded raw carry their own rows.
    if created and not raw:
        open_account(user=instance)


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
    summary = pay_dividends_for_day(category=category, date=date)
    notices.tell_dividends(
        payouts=[(payout.term_id, payout.papers) for payout in summary.payouts],
        per_share=settings.MARKET_DIVIDEND_PER_MENTION,
    )
    # The new listings start fresh mention trends and need their terms highlighted: do both
    # here, in the worker, rather than on the first reader's request.
    trends.count_all_listed()
    highlighted_html.keep_recent_highlights()
    research.recount(months=[date])


@receiver(history_stored, dispatch_uid="market_research_after_history")
def count_history(sender, *, months, **kwargs) -> None:
    # Bulk history pays nothing (it was announced before the market knew it) but it is the
    # term pages' research: its months are recounted in the worker.
    iso = None if months is None else sorted(month.isoformat() for month in months)
    send_from_request(tasks.recount_research, args=(iso,), what="the term research's recount")


@receiver(post_save, sender=Term, dispatch_uid="market_term_highlights")
@receiver(post_delete, sender=Term, dispatch_uid="market_term_highlights_deleted")
def highlight_for_the_new_term_set(sender, raw: bool = False, **kwargs) -> None:
    # A term added, edited or removed changes what the newest papers highlight: match them
    # again in the worker once the change is committed (the page would do it otherwise).
    if not raw:
        transaction.on_commit(_queue_highlights)


def _queue_research() -> None:
    # A term listed or changed changes what every month counts.
    send_from_request(tasks.recount_research, what="the term research's recount")


@receiver(post_save, sender=Term, dispatch_uid="market_term_research")
@receiver(post_delete, sender=Term, dispatch_uid="market_term_research_deleted")
def research_the_new_term_set(sender, raw: bool = False, **kwargs) -> None:
    if not raw:
        transaction.on_commit(_queue_research)


def _queue_highlights() -> None:
    # With the broker away the first reader of each page matches instead: slower, not wrong.
    send_from_request(tasks.keep_highlights, what="the highlighting of the newest papers")
