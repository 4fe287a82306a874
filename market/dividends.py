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
    """Record the day's mentions and pay their dividends. Running it again pays nothing more."""
    summary = DividendSummary(category=category.code, date=date)
    listings = (
        Listing.objects.filter(
            category=category,
            date=date,
            announce_type__in=Listing.STREAM_TYPES,
            paper__hidden=False,
        )
        .select_related("paper")
        .order_by("paper__arxiv_id")
    )
    matcher = highlighting.current_matcher()
    papers_by_term: dict[int, list[int]] = defaultdict(list)
    for listing in listings:
        paper = listing.paper
        summary.papers_scanned += 1
        # Title and abstract are matched separately so that a phrase cannot span the two.
        for term_id in matcher.mentioned_terms(paper.title) | matcher.mentioned_terms(
            paper.abstract
        ):
            papers_by_term[term_id].append(paper.pk)

    # The cached matcher may be a moment behind: pay only terms that are listed right now
    # (pay_dividend re-checks under the term's lock).
    terms = Term.objects.listed().in_bulk(list(papers_by_term))
    Mention.objects.bulk_create(
        [
            Mention(term_id=term_id, paper_id=paper_id, date=date)
            for term_id in terms
            for paper_id in papers_by_term[term_id]
        ],
        ignore_conflicts=True,
    )
    summary.mentions = sum(len(papers_by_term[term_id]) for term_id in terms)
    for term_id in sorted(terms):
        # One transaction per term keeps each term's lock short; a failure part-way leaves the
        # other terms paid and a re-run pays the rest.
        summary.payouts.append(
            trading.pay_dividend(
                term=terms[term_id],
                paper_ids=papers_by_term[term_id],
                per_share=settings.MARKET_DIVIDEND_PER_MENTION,
                date=date,
                category=category,
            )
        )
    return summary
