"""The opt-in daily digest: a day's papers in the watched categories, and the holder's terms."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string

from market.models import Holding
from market.tickers import load_tickers
from papers.models import Listing

from .models import DigestDelivery
from .saved_searches import saved_search_matches

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TermMove:
    phrase: str
    slug: str
    shares: int
    price: int
    change_bp: int | None


def digest_for(*, user, date: dt.date, tickers) -> tuple[list[Listing], list[TermMove]]:
    listings = list(Listing.objects.watched_by(user).filter(date=date))
    holdings = (
        Holding.objects.filter(account__user=user, shares__gt=0)
        .select_related("term")
        .order_by("term__phrase")
    )
    moves = [
        TermMove(
            phrase=holding.term.phrase,
            slug=holding.term.slug,
            shares=holding.shares,
            price=tickers[holding.term_id].price if holding.term_id in tickers else 0,
            change_bp=tickers[holding.term_id].change_bp if holding.term_id in tickers else None,
        )
        for holding in holdings
    ]
    return listings, moves


def send_daily_digests(*, date: dt.date, base_url: str | None = None) -> int:
    """Mail every subscriber who has something to read for ``date``; returns how many were sent.

    Each user is claimed with a unique DigestDelivery row before mailing, so concurrent or
    repeated runs (a re-ingest, a retried task) send at most one digest per user and day.
    """
    base_url = base_url or settings.SITE_URL
    subscribers = (
        get_user_model()
        .objects.filter(is_active=True, preferences__daily_digest=True)
        .exclude(email="")
    )
    tickers = load_tickers()
    sent = 0
    for user in subscribers:
        if DigestDelivery.objects.filter(user=user, date=date).exists():
            continue
        listings, moves = digest_for(user=user, date=date, tickers=tickers)
        # Once per paper: one in a watched category is already in the day's list.
        listed = {listing.paper_id for listing in listings}
        matches = [
            match
            for match in saved_search_matches(user=user, since=date, until=date)
            if match.paper.pk not in listed
        ]
        if not listings and not moves and not matches:
            continue
        try:
            with transaction.atomic():
                DigestDelivery.objects.create(
                    user=user, date=date, paper_count=len(listings) + len(matches)
                )
        except IntegrityError:
            continue  # another run claimed this user for the day
        context = {
            "user": user,
            "date": date,
            "listings": listings,
            "moves": moves,
            "matches": matches,
            "base_url": base_url.rstrip("/"),
        }
        message = EmailMultiAlternatives(
            subject=f"Peer Revenue digest for {date:%A} {date.day} {date:%B}",
            body=render_to_string("accounts/digest.txt", context),
            to=[user.email],
        )
        message.attach_alternative(render_to_string("accounts/digest.html", context), "text/html")
        message.send()
        sent += 1
    logger.info("Sent %d digest(s) for %s", sent, date)
    return sent
