"""Telling traders what happened: their orders' fills and cancellations, and the terms they
follow moving past their threshold or paying a dividend.

Each event is a ``Notice`` row, written in the transaction of what it tells (a fill, a cancel,
a sweep), so nothing is told that did not happen. A trader sees everything untold as one
batched notice on their next page (``accounts.news``, then ``mark_seen``) and in the
next digest (``undigested``). Whether there is anything to tell is asked of the rows
themselves (``news_sql``), in the statement that reads the reader's session: no writer has to
remember to raise a flag, and a notice written by the database itself (a term halted from
psql) shows on the next page.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from . import curve
from .models import Follow, Notice, Term, TermProposal
from .units import format_credits

# The choices a reader has for "tell me when it moves by more than …", in basis points.
THRESHOLDS = (500, 1_000, 2_000, 5_000)


def news_sql(user_id: str) -> str:
    """An SQL condition: the user whose id is the expression ``user_id`` has something untold,
    a notice not yet seen or a listed proposal not yet shown (two probes of partial indexes,
    ``notice_unseen`` and ``proposal_unseen_notice``)."""
    proposals = TermProposal._meta.db_table
    return (
        f"(EXISTS (SELECT 1 FROM {Notice._meta.db_table} AS n"  # noqa: S608 - our own names
        f" WHERE n.user_id = {user_id} AND n.seen_at IS NULL)"
        f" OR EXISTS (SELECT 1 FROM {proposals} AS p WHERE p.user_id = {user_id}"
        " AND p.listed_at IS NOT NULL AND p.notice_shown_at IS NULL))"
    )


def has_news(*, user) -> bool:
    """``news_sql`` for one user, where the session did not say (one query)."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {news_sql('%s')}", [user.pk, user.pk])
        return bool(cursor.fetchone()[0])


def tell(*, user_id: int, kind: str, text: str, term_id: int | None = None, order_id=None) -> None:
    """Write one notice (in the caller's transaction)."""
    Notice.objects.create(user_id=user_id, kind=kind, text=text, term_id=term_id, order_id=order_id)


def mark_seen(*, user) -> list[Notice]:
    """Every notice of ``user`` not yet shown, marked shown (a conditional update: two pages
    at once show each notice once)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Notice._meta.db_table} SET seen_at = now() "
            "WHERE user_id = %s AND seen_at IS NULL RETURNING id",
            [user.pk],
        )
        ids = [row[0] for row in cursor.fetchall()]
    return list(Notice.objects.filter(pk__in=ids).order_by("created_at", "id")) if ids else []


def mark_order_told(*, order) -> int:
    """Mark the untold notices of ``order`` shown: the page that placed it said what they say
    (its fills at once), and the next page must not say it again. The digest still has them."""
    return Notice.objects.filter(order=order, seen_at__isnull=True).update(seen_at=timezone.now())


def batched_text(notices: list[Notice]) -> str:
    """One message for a batch: the sentences, the newest last."""
    return " ".join(notice.text for notice in notices)


def undigested(*, user) -> list[Notice]:
    return list(Notice.objects.filter(user=user, digested_at__isnull=True).order_by("created_at"))


def mark_digested(notices: list[Notice]) -> None:
    Notice.objects.filter(pk__in=[n.pk for n in notices], digested_at__isnull=True).update(
        digested_at=timezone.now()
    )


def recent(*, user, limit: int = 20) -> list[Notice]:
    return list(Notice.objects.filter(user=user).select_related("term").order_by("-id")[:limit])


# Follows ------------------------------------------------------------------------------------


def follow(*, user, term: Term, threshold_bp: int | None = None) -> Follow:
    """Follow ``term`` (or change the threshold); moves are measured from the price now."""
    threshold = threshold_bp or settings.MARKET_FOLLOW_THRESHOLD_BASIS_POINTS
    if threshold not in THRESHOLDS and threshold != settings.MARKET_FOLLOW_THRESHOLD_BASIS_POINTS:
        raise ValueError(f"Choose a threshold of {', '.join(percent(t) for t in THRESHOLDS)}.")
    price = Term.objects.values_list("supply", "p0", "k").get(pk=term.pk)
    now_price = curve.price(price[0], p0=price[1], k=price[2])
    found, _ = Follow.objects.update_or_create(
        user=user,
        term=term,
        defaults={"threshold_bp": threshold, "reference_price": now_price},
    )
    return found


def unfollow(*, user, term: Term) -> None:
    Follow.objects.filter(user=user, term=term).delete()


def following(*, user, term_id: int) -> Follow | None:
    return Follow.objects.filter(user=user, term_id=term_id).first()


def percent(basis_points: int) -> str:
    return f"{basis_points / 100:g}%"


def tell_moves() -> int:
    """Tell each follower whose term moved more than their threshold since they were last told
    (one notice each), and measure from the new price. Returns how many were told.

    One query finds the moves; each follow's reference is moved by a conditional update, so two
    sweeps at once tell a move once.
    """
    f, t = Follow._meta.db_table, Term._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT f.id, f.user_id, f.term_id, t.phrase, f.reference_price,
                       t.p0 + t.k * t.supply AS price, f.threshold_bp
                FROM {f} f JOIN {t} t ON t.id = f.term_id
                WHERE t.status = 'listed'
                  AND abs(t.p0 + t.k * t.supply - f.reference_price) * 10000
                      > f.threshold_bp::bigint * f.reference_price"""
        )
        rows = cursor.fetchall()
    told = 0
    for follow_id, user_id, term_id, phrase, before, price, threshold in rows:
        with transaction.atomic():
            if not Follow.objects.filter(pk=follow_id, reference_price=before).update(
                reference_price=price
            ):
                continue
            change = (price - before) * 10_000 // before if before else 0
            direction = "rose" if price > before else "fell"
            tell(
                user_id=user_id,
                kind=Notice.Kind.MOVE,
                term_id=term_id,
                text=f"“{phrase}” {direction} {percent(abs(change))} to {format_credits(price)} "
                f"a share (from {format_credits(before)}), past your {percent(threshold)} "
                "threshold.",
            )
            told += 1
    return told


def tell_dividends(*, payouts: Iterable[tuple[int, int]], per_share: int) -> int:
    """Tell the followers of each term that paid: ``payouts`` are (term id, papers)."""
    told = 0
    paid = [(term_id, papers) for term_id, papers in payouts if papers]
    if not paid:
        return 0
    phrases = dict(Term.objects.filter(pk__in=[t for t, _ in paid]).values_list("pk", "phrase"))
    with transaction.atomic():
        for term_id, papers in paid:
            users = Follow.objects.filter(term_id=term_id).values_list("user_id", flat=True)
            text = (
                f"“{phrases.get(term_id, '?')}” paid a dividend: {papers:,} new "
                f"paper{'s' if papers != 1 else ''} mentioned it, "
                f"{format_credits(per_share * papers)} a share."
            )
            notices = [
                Notice(user_id=u, kind=Notice.Kind.DIVIDEND, term_id=term_id, text=text)
                for u in users
            ]
            Notice.objects.bulk_create(notices)
            told += len(notices)
    return told
