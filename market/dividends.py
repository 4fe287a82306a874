"""Dividends: a day's newly announced papers pay the holders of the terms they mention.

Called after a category's day has been ingested (see ``market.tasks.pay_dividends``). For each
new or cross-listed, visible paper of the day, the matcher in ``market.highlighting`` finds the
listed terms its title or abstract mentions; each (term, paper) pair is recorded as a
``Mention`` and pays ``MARKET_DIVIDEND_PER_MENTION`` µ¢ per share to every holder, once ever.
The money moves through ``market.trading.pay_dividend``.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection
from django.utils import timezone

from papers.models import Category, Listing

from . import highlighting, trading
from .models import Mention, Term


@dataclass
class DividendSummary:
    category: str
    date: dt.date
    papers_scanned: int = 0
    mentions: int = 0  # (term, paper) pairs found in the day's papers
    payouts: list[trading.DividendPayout] = field(default_factory=list)

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
        )
        .order_by("paper__arxiv_id")
        .values_list("paper_id", "paper__title", "paper__abstract")
    )
    matcher = highlighting.current_matcher()
    papers_by_term: dict[int, list[int]] = defaultdict(list)
    for paper_id, title, abstract in texts:
        summary.papers_scanned += 1
        # Title and abstract are matched separately so that a phrase cannot span the two.
        for term_id in matcher.mentioned_terms(title) | matcher.mentioned_terms(abstract):
            papers_by_term[term_id].append(paper_id)

    # The cached matcher may be a moment behind: pay only terms that are listed right now
    # (the payout re-checks under the terms' locks).
    terms = Term.objects.listed().in_bulk(list(papers_by_term))
    _record_mentions(
        [(term_id, paper_id) for term_id in terms for paper_id in papers_by_term[term_id]],
        date=date,
    )
    summary.mentions = sum(len(papers_by_term[term_id]) for term_id in terms)
    summary.payouts = trading.pay_dividends_for_terms(
        paper_ids_by_term={term_id: papers_by_term[term_id] for term_id in sorted(terms)},
        per_share=settings.MARKET_DIVIDEND_PER_MENTION,
        date=date,
        category=category,
    )
    return summary


def _record_mentions(pairs: list[tuple[int, int]], *, date: dt.date) -> None:
    """Insert (term id, paper id) mentions; those already recorded are left as they are.

    The unique (term, paper) constraint, with ON CONFLICT DO NOTHING, makes a re-run, or the
    same paper cross-listed in another category's run, record nothing twice. One
    INSERT … SELECT FROM unnest() of two integer arrays: a busy day has ten thousand mentions,
    and building and quoting as many model instances would cost more than the insert itself.
    """
    if not pairs:
        return
    now = timezone.now()
    meta = Mention._meta
    quote = connection.ops.quote_name
    term, paper, day, created = (
        quote(meta.get_field(name).column) for name in ("term", "paper", "date", "created_at")
    )
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {quote(meta.db_table)} ({term}, {paper}, {day}, {created}) "
            "SELECT term_id, paper_id, %s, %s "
            "FROM unnest(%s::bigint[], %s::bigint[]) AS pairs(term_id, paper_id) "
            f"ON CONFLICT ({term}, {paper}) DO NOTHING",
            [date, now, [t for t, _ in pairs], [p for _, p in pairs]],
        )
