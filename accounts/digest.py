"""The opt-in daily digest: a day's papers in the watched categories, the reader's picks ("for
you": new papers like their library, from the stored scores, each with why), the dividends the
reader was paid for the day's papers, and the biggest moves in the terms they hold. A reader
with nothing saved is told how to start and what is hot instead; that alone sends no mail."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import Count, OuterRef, Subquery, Sum
from django.template.loader import render_to_string

from library import hot as library_hot
from library import saves
from library.recommended import Pick, recommended
from market import notices as market_notices
from market.models import DividendEvent, Entry, Holding, LedgerTransaction
from market.tickers import load_tickers
from papers.models import Listing

from .models import DigestDelivery
from .saved_searches import saved_search_matches

logger = logging.getLogger(__name__)


# The digest lists this many of the reader's terms, those that moved most first.
MOST_MOVES = 8
# "For you": the best picks announced in the last PICK_DAYS days up to the digest's date
# (arxiv-sanity-lite mails the last three days' best), and for a reader with nothing saved
# the week's HOT_SHOWN hottest papers.
PICKS_SHOWN = 5
PICK_DAYS = 3
HOT_SHOWN = 3


@dataclass(frozen=True)
class TermMove:
    phrase: str
    slug: str
    shares: int
    price: int
    change_bp: int | None


@dataclass(frozen=True)
class DividendLine:
    phrase: str
    slug: str
    papers: int  # mentioning papers announced that day
    amount: int  # µ¢ paid to the reader


@dataclass(frozen=True)
class Digest:
    listings: list[Listing]
    moves: list[TermMove]  # biggest moves first, at most MOST_MOVES
    dividends: list[DividendLine]
    more_terms: int = 0  # held terms left out of ``moves``
    # Orders filled or cancelled, followed terms that moved or paid: everything not yet in a
    # digest, as one batch (market.notices).
    notices: list = field(default_factory=list)
    picks: list[Pick] = field(default_factory=list)
    # Nothing saved: the digest says how to start, with what is hot (never a reason to mail).
    starter: bool = False

    @property
    def dividends_total(self) -> int:
        return sum(line.amount for line in self.dividends)

    @property
    def is_empty(self) -> bool:
        return not (self.listings or self.moves or self.dividends or self.notices or self.picks)


def dividends_paid(*, user, date: dt.date) -> list[DividendLine]:
    """What the user was paid for papers announced on ``date``, per term, largest first.

    A dividend transaction pays one term for one day's papers; its events name the term and
    count the papers.
    """
    events = DividendEvent.objects.filter(transaction_id=OuterRef("transaction_id"))
    papers = events.order_by().values("transaction_id").annotate(n=Count("pk")).values("n")
    rows = (
        Entry.objects.filter(
            account__user=user,
            asset=Entry.Asset.CASH,
            transaction__kind=LedgerTransaction.Kind.DIVIDEND,
            transaction__in=DividendEvent.objects.filter(date=date).values("transaction_id"),
        )
        .annotate(
            phrase=Subquery(events.values("term__phrase")[:1]),
            slug=Subquery(events.values("term__slug")[:1]),
            papers=Subquery(papers),
        )
        .order_by()
        .values("phrase", "slug")
        .annotate(amount=Sum("amount"), n_papers=Sum("papers"))
        .order_by("-amount", "phrase")
    )
    return [
        DividendLine(row["phrase"], row["slug"], row["n_papers"] or 0, row["amount"])
        for row in rows
    ]


def biggest_moves(moves: list[TermMove]) -> list[TermMove]:
    """Largest day change first, whichever the direction; unpriced terms last."""
    return sorted(
        moves,
        key=lambda m: (m.change_bp is None, -abs(m.change_bp or 0), m.phrase.lower()),
    )


def digest_for(*, user, date: dt.date, tickers) -> Digest:
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
    ranked = biggest_moves(moves)
    listed = {listing.paper_id for listing in listings}
    # Once per paper: one already in the day's list is not picked again below it.
    picks = [
        pick
        for pick in picked(user_id=user.pk, date=date, limit=PICKS_SHOWN + len(listed))
        if pick.paper.pk not in listed
    ][:PICKS_SHOWN]
    return Digest(
        listings=listings,
        moves=ranked[:MOST_MOVES],
        dividends=dividends_paid(user=user, date=date),
        more_terms=max(len(ranked) - MOST_MOVES, 0),
        notices=market_notices.undigested(user=user),
        picks=picks,
        starter=not picks and not saves.library_size(user=user),
    )


def picked(*, user_id: int, date: dt.date, limit: int) -> list[Pick]:
    """The reader's stored picks announced in the ``PICK_DAYS`` days up to ``date``."""
    first = date - dt.timedelta(days=PICK_DAYS - 1)
    return recommended(user_id=user_id, limit=limit, announced=(first, date))


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
    hot: list | None = None  # read once, for the first reader with nothing saved
    sent = 0
    for user in subscribers:
        if DigestDelivery.objects.filter(user=user, date=date).exists():
            continue
        digest = digest_for(user=user, date=date, tickers=tickers)
        # Once per paper: one in a watched category is already in the day's list.
        listed = {listing.paper_id for listing in digest.listings}
        matches = [
            match
            for match in saved_search_matches(user=user, since=date, until=date)
            if match.paper.pk not in listed
        ]
        matched = {match.paper.pk for match in matches}
        picks = [pick for pick in digest.picks if pick.paper.pk not in matched]
        if digest.is_empty and not matches:
            continue
        try:
            with transaction.atomic():
                DigestDelivery.objects.create(
                    user=user,
                    date=date,
                    paper_count=len(digest.listings) + len(matches) + len(picks),
                )
        except IntegrityError:
            continue  # another run claimed this user for the day
        if digest.starter and hot is None:
            library_hot.refresh_if_due()
            hot = library_hot.hot_papers(period="week", limit=HOT_SHOWN)
        context = {
            "user": user,
            "date": date,
            "listings": digest.listings,
            "moves": digest.moves,
            "more_terms": digest.more_terms,
            "dividends": digest.dividends,
            "dividends_total": digest.dividends_total,
            "matches": matches,
            "notices": digest.notices,
            "picks": picks,
            "starter": digest.starter,
            "hot": hot or [],
            "base_url": base_url.rstrip("/"),
        }
        message = EmailMultiAlternatives(
            subject=f"Peer Revenue digest for {date:%A} {date.day} {date:%B}",
            body=render_to_string("accounts/digest.txt", context),
            to=[user.email],
        )
        message.attach_alternative(render_to_string("accounts/digest.html", context), "text/html")
        message.send()
        market_notices.mark_digested(digest.notices)
        sent += 1
    logger.info("Sent %d digest(s) for %s", sent, date)
    return sent
