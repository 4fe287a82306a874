"""Dividends: a day's newly announced papers pay the holders of the terms they mention.

Called after a category's day has been ingested (``market.signals`` receives
``papers.signals.listings_announced``). For each new or cross-listed, visible paper of the day,
the matcher in ``market.highlighting`` finds the listed terms its title or abstract mentions;
each (term, paper) pair is recorded as a ``Mention`` and pays ``MARKET_DIVIDEND_PER_MENTION`` µ¢
per share to every holder who held it through the paper's submission window
(market/windows.py), once ever, minted from the issuance account.

Shares held by a verified author of the paper (an approved ``authorship.Claim``) earn nothing
from it: what they would have earned is recorded as withheld (``market.withholding``).

Locks: a payout locks the term, then the papers' rows (shared: a claim's approval waits for it,
market/sql/claim_decisions.sql), then the holders' accounts in id order, then the issuance
account, the order every market write uses.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.db.models import BigIntegerField, Case, F, Sum, When
from django.utils import timezone

from papers.calendar import announced_at
from papers.models import Category, Listing
from peerrevenue.db import atomic_with_retries, insert_unnest

from . import highlighting
from .models import Account, DividendEvent, Entry, LedgerTransaction, Mention, Term, Trade
from .refusals import InvalidQuantity
from .windows import Balances, Window, paper_windows
from .withholding import authors_of, record_withheld


@dataclass(frozen=True, slots=True)
class DividendPayout:
    term_id: int
    papers: int  # mentioning papers paid for now (not before)
    shares: int  # shares paid for one paper (the most, when the papers' windows differ)
    amount: int  # µ¢ minted and paid out


@dataclass
class DividendSummary:
    category: str
    date: dt.date
    papers_scanned: int = 0
    mentions: int = 0  # (term, paper) pairs found in the day's papers
    payouts: list[DividendPayout] = field(default_factory=list)

    @property
    def papers_paid(self) -> int:
        return sum(payout.papers for payout in self.payouts)

    @property
    def amount(self) -> int:
        return sum(payout.amount for payout in self.payouts)

    def as_dict(self) -> dict:
        return {
            "category": self.category,
            "date": self.date.isoformat(),
            "papers_scanned": self.papers_scanned,
            "mentions": self.mentions,
            "term_papers_paid": self.papers_paid,
            "amount": self.amount,
        }


def pay_dividends_for_day(*, category: Category, date: dt.date) -> DividendSummary:
    """Record the day's mentions and pay their dividends. Running it again pays nothing more.

    A constant number of queries however many papers and terms the day has (plus a few for each
    term that somebody holds): the texts are read in one query and scanned in Python with the
    compiled matcher, the mentions are inserted in one statement and the payouts are batched.
    """
    summary = DividendSummary(category=category.code, date=date)
    # Only what the matcher reads: the rendered HTML and the rest of the row are not needed.
    texts = (
        Listing.objects.filter(
            category=category,
            date=date,
            announce_type__in=Listing.STREAM_TYPES,
            paper__hidden=False,
            # History's listings (papers.history) were announced before the market knew them.
            approximate=False,
        )
        .order_by("paper__arxiv_id")
        .values_list("paper_id", "paper__title", "paper__abstract")
    )
    matcher = highlighting.current_matcher()
    papers_by_term: dict[int, list[int]] = defaultdict(list)
    for paper_id, title, abstract in texts:
        summary.papers_scanned += 1
        for term_id in matcher.paper_mentions(title=title, abstract=abstract):
            papers_by_term[term_id].append(paper_id)

    # The cached matcher may be a moment behind: pay only terms that are listed right now
    # (the payout re-checks under the terms' locks).
    terms = Term.objects.listed().in_bulk(list(papers_by_term))
    pairs = [(term_id, paper_id) for term_id in terms for paper_id in papers_by_term[term_id]]
    _record_mentions(pairs, date=date)
    summary.mentions = sum(len(papers_by_term[term_id]) for term_id in terms)
    summary.payouts = pay_dividends_for_terms(
        paper_ids_by_term={term_id: papers_by_term[term_id] for term_id in sorted(terms)},
        per_share=settings.MARKET_DIVIDEND_PER_MENTION,
        date=date,
        category=category,
    )
    return summary


def _record_mentions(pairs: list[tuple[int, int]], *, date: dt.date) -> None:
    """Insert (term id, paper id) mentions; those already recorded are left as they are.

    The unique (term, paper) constraint makes a re-run, or the same paper cross-listed in
    another category's run, record nothing twice.
    """
    insert_unnest(
        Mention,
        arrays={"term": [t for t, _ in pairs], "paper": [p for _, p in pairs]},
        constants={"date": date, "created_at": timezone.now()},
        unique=("term", "paper"),
    )


# Payouts --------------------------------------------------------------------------------
#
# The rule (market/rules.md states it): listing day D is announced at 20:00 New York time on
# the day before (papers.calendar.announced_at). A mention pays only if that instant is at or
# after the moment the term was listed, and it pays each trader the lowest balance they held
# at any moment of the paper's submission window (market/windows.py: from the paper's
# submission, or the start of its submission period, to the announcement), from the trade
# history by each trade's time: shares bought inside the window earn nothing from the paper,
# shares sold after the announcement still do, and a backfill of days before the listing pays
# nothing. Each (term, paper) pays at most once, ever.


def holdings_at(*, term: Term, instant: dt.datetime) -> list[tuple[int, int]]:
    """(account id, shares) of everyone who held shares of ``term`` at ``instant``, from the
    trades made at or before it, in account id order."""
    signed = Case(
        When(side=Trade.Side.BUY, then=F("shares")),
        default=-F("shares"),
        output_field=BigIntegerField(),
    )
    return list(
        Trade.objects.filter(term=term, created_at__lte=instant)
        .order_by()
        .values("account_id")
        .annotate(held=Sum(signed))
        .filter(held__gt=0)
        .order_by("account_id")
        .values_list("account_id", "held")
    )


def _check_per_share(per_share: object) -> int:
    if type(per_share) is not int or per_share < 0:
        raise InvalidQuantity("The dividend per share must be a whole, non-negative number of µ¢.")
    return per_share


def pay_dividend(
    *,
    term: Term,
    paper_ids: Sequence[int],
    per_share: int,
    date: dt.date,
    category: Category | None = None,
    windows: Mapping[int, Window] | None = None,
) -> DividendPayout:
    """Pay ``per_share`` µ¢ for each paper in ``paper_ids`` (listed on ``date``) not paid
    before, per share held through that paper's submission window, minted from issuance.
    Idempotent per term and paper. ``windows`` (paper id → window), when the caller has them,
    saves reading them again.

    The term row is locked for the whole payout, so no other payout for it can be between the
    check for papers already paid and the record of these.
    """
    _check_per_share(per_share)
    instant = announced_at(date)

    def work() -> DividendPayout:
        locked = Term.objects.select_for_update().get(pk=term.pk)
        nothing = DividendPayout(term_id=locked.pk, papers=0, shares=0, amount=0)
        if locked.status != Term.Status.LISTED:
            return nothing
        paid = set(
            DividendEvent.objects.filter(term=locked, paper_id__in=paper_ids).values_list(
                "paper_id", flat=True
            )
        )
        new_papers = sorted(set(paper_ids) - paid)
        if not new_papers:
            return nothing
        found: Mapping[int, Window] = windows or {}
        if not set(new_papers) <= found.keys():
            found = paper_windows(paper_ids=new_papers, listing_date=date)
        # Announced before the term existed: recorded (so it is never looked at again), unpaid.
        held: dict[int, list[tuple[int, int]]] = {paper_id: [] for paper_id in new_papers}
        withheld: list[tuple[int, int, int, int]] = []  # (paper, account, claim, shares)
        if instant >= locked.listed_at:
            balances = Balances(
                term=locked, earliest=min(found[p].opens for p in new_papers), end=instant
            )
            authors = authors_of(paper_ids=new_papers)
            by_opening: dict[dt.datetime, list[tuple[int, int]]] = {}
            for paper_id in new_papers:
                opens = found[paper_id].opens
                if opens not in by_opening:
                    by_opening[opens] = balances.held_through(opens)
                own = authors.get(paper_id, {})
                held[paper_id] = [(a, n) for a, n in by_opening[opens] if a not in own]
                withheld += [(paper_id, a, own[a], n) for a, n in by_opening[opens] if a in own]
        owed: dict[int, int] = defaultdict(int)  # account id → µ¢
        for holders in held.values():
            for account_id, shares in holders:
                owed[account_id] += shares * per_share
        amount = sum(owed.values())
        txn = None
        if amount:
            txn = _pay_holders(
                owed=sorted(owed.items()),
                memo=f"Dividend on “{locked.phrase}”: {len(new_papers)} mentioning "
                f"paper(s) listed {date.isoformat()}, {per_share:,} µ¢ per share held through "
                "each paper's submission window",
            )
        events = DividendEvent.objects.bulk_create(
            [
                DividendEvent(
                    term=locked,
                    paper_id=paper_id,
                    category=category,
                    date=date,
                    announced_at=instant,
                    window_opens_at=found[paper_id].opens,
                    window_source=found[paper_id].source,
                    per_share=per_share,
                    shares=sum(shares for _, shares in held[paper_id]),
                    transaction=txn if held[paper_id] else None,
                )
                for paper_id in new_papers
            ]
        )
        record_withheld(withheld, events={event.paper_id: event for event in events})
        return DividendPayout(
            term_id=locked.pk,
            papers=len(new_papers),
            shares=max(sum(shares for _, shares in holders) for holders in held.values()),
            amount=amount,
        )

    return atomic_with_retries(work)


def _pay_holders(*, owed: list[tuple[int, int]], memo: str) -> LedgerTransaction:
    """Credit each (account id, µ¢) from issuance, in account id order, as one ledger
    transaction. Holders may have sold since, so the amounts come from the history, not from
    today's holdings."""
    holder_ids = [account_id for account_id, _ in owed]
    amounts = [amount for _, amount in owed]
    # Lock holders in id order: two payouts for different terms then queue on the same
    # accounts in the same order instead of deadlocking. Issuance is locked last.
    list(
        Account.objects.select_for_update()
        .filter(pk__in=holder_ids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    txn = LedgerTransaction.objects.create(kind=LedgerTransaction.Kind.DIVIDEND, memo=memo)
    issuance = Account.objects.system(Account.Kind.ISSUANCE)
    Entry.objects.bulk_create(
        [
            Entry(transaction=txn, account_id=account_id, asset=Entry.Asset.CASH, amount=amount)
            for account_id, amount in owed
        ]
        + [
            Entry(
                transaction=txn,
                account_id=issuance.pk,
                asset=Entry.Asset.CASH,
                amount=-sum(amounts),
            )
        ]
    )
    table = connection.ops.quote_name(Account._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS a SET cash = a.cash + paid.amount "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS paid(id, amount) WHERE a.id = paid.id",
            [holder_ids, amounts],
        )
    Account.objects.filter(pk=issuance.pk).update(cash=F("cash") - sum(amounts))
    return txn


def pay_dividends_for_terms(
    *,
    paper_ids_by_term: Mapping[int, Sequence[int]],
    per_share: int,
    date: dt.date,
    category: Category | None = None,
) -> list[DividendPayout]:
    """``pay_dividend`` for many terms at once, with a number of queries that does not grow
    with the number of terms nobody held at the announcement. Returns one payout per term, in
    term id order.

    Most mentioned terms had no holders then (or were listed after it): for those the only
    thing to do is to record, once, that the paper's dividend went to nobody. That happens for
    all of them in ONE transaction: their term rows are locked together, in id order (the order
    every payout locks terms in, so two batches cannot deadlock, and trades lock a single
    term). The terms that had holders are then paid one transaction each through
    ``pay_dividend``, which locks and checks again, so a term's lock is held only as long as
    its own payout.
    """
    _check_per_share(per_share)
    instant = announced_at(date)
    wanted = {term_id: sorted(set(ids)) for term_id, ids in paper_ids_by_term.items() if ids}
    # Every paper's window, read once for all the terms that mention it.
    windows = paper_windows(
        paper_ids={paper_id for ids in wanted.values() for paper_id in ids}, listing_date=date
    )

    def work() -> tuple[dict[int, DividendPayout], list[Term]]:
        locked = list(Term.objects.select_for_update().filter(pk__in=wanted).order_by("pk"))
        payouts = {
            term.pk: DividendPayout(term_id=term.pk, papers=0, shares=0, amount=0)
            for term in locked
        }
        listed = [term for term in locked if term.status == Term.Status.LISTED]
        if not listed:
            return payouts, []
        # Under the term locks no other payout for these terms can be between check and insert.
        paid: set[tuple[int, int]] = set(
            DividendEvent.objects.filter(
                term__in=listed,
                paper_id__in={paper_id for term in listed for paper_id in wanted[term.pk]},
            ).values_list("term_id", "paper_id")
        )
        traded_before = set(
            Trade.objects.filter(term__in=listed, created_at__lte=instant)
            .order_by()
            .values_list("term_id", flat=True)
            .distinct()
        )
        held = {term.pk for term in listed if term.pk in traded_before}
        held -= {term.pk for term in listed if instant < term.listed_at}
        unpaid: list[tuple[int, int]] = []  # (term id, paper id)
        for term in listed:
            if term.pk in held:
                continue
            new_papers = [p for p in wanted[term.pk] if (term.pk, p) not in paid]
            payouts[term.pk] = DividendPayout(
                term_id=term.pk, papers=len(new_papers), shares=0, amount=0
            )
            unpaid += [(term.pk, paper_id) for paper_id in new_papers]
        _record_unheld_dividends(
            unpaid,
            windows=windows,
            per_share=per_share,
            date=date,
            instant=instant,
            category=category,
        )
        return payouts, [term for term in listed if term.pk in held]

    payouts, held_terms = atomic_with_retries(work)
    for term in held_terms:
        payouts[term.pk] = pay_dividend(
            term=term,
            paper_ids=wanted[term.pk],
            per_share=per_share,
            date=date,
            category=category,
            windows=windows,
        )
    return [payouts[term_id] for term_id in sorted(payouts)]


def _record_unheld_dividends(
    pairs: Sequence[tuple[int, int]],
    *,
    windows: Mapping[int, Window],
    per_share: int,
    date: dt.date,
    instant: dt.datetime,
    category: Category | None,
) -> None:
    """Record (term id, paper id) dividends that nobody held shares for: no money moves.
    A busy day has ten thousand of these rows: one INSERT … SELECT FROM unnest()."""
    if not pairs:
        return
    insert_unnest(
        DividendEvent,
        arrays={
            "term": [t for t, _ in pairs],
            "paper": [p for _, p in pairs],
            "window_opens_at": [windows[p].opens for _, p in pairs],
            "window_source": [windows[p].source for _, p in pairs],
        },
        constants={
            "category": category.pk if category is not None else None,
            "date": date,
            "announced_at": instant,
            "per_share": per_share,
            "shares": 0,
            "transaction": None,
            "created_at": timezone.now(),
        },
    )
