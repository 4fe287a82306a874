"""Small builders for papers, listings, announcements and trades, so tests read like what a
user does: a paper is announced, a trader buys or sells."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid

from market import trading
from market.models import Account, Mention, Term, Trade
from papers.models import Category, Listing, Paper
from papers.typesetting import TYPESETTER_VERSION, tex_to_html, tex_to_text

_numbers = itertools.count(1)


def make_paper(
    *,
    arxiv_id: str | None = None,
    title: str = "A study of consensus",
    abstract: str = "We study consensus in asynchronous networks.",
    authors: list[str] | tuple[str, ...] = ("Ada Lovelace",),
    primary: str = "cs.DC",
    categories: list[str] | None = None,
    hidden: bool = False,
    version: int = 1,
) -> Paper:
    names = [tex_to_text(name) for name in authors]
    return Paper.objects.create(
        arxiv_id=arxiv_id or f"2611.{next(_numbers):05d}",
        version=version,
        title=title,
        title_html=tex_to_html(title, paragraphs=False),
        abstract=abstract,
        abstract_html=tex_to_html(abstract),
        authors=[
            {"name": raw, "name_text": text, "affiliation": ""}
            for raw, text in zip(authors, names, strict=True)
        ],
        authors_text=", ".join(names),
        typesetter_version=TYPESETTER_VERSION,
        primary_category=primary,
        categories=categories or [primary] + ([] if primary == "cs.DC" else ["cs.DC"]),
        hidden=hidden,
    )


def list_paper(
    paper: Paper,
    *,
    category: Category,
    date: dt.date,
    announce_type: str = Listing.AnnounceType.NEW,
) -> Listing:
    return Listing.objects.create(
        category=category, paper=paper, date=date, announce_type=announce_type
    )


def make_listed_papers(
    count: int, *, category: Category, date: dt.date, first_number: int = 1
) -> list[Paper]:
    papers = []
    for offset in range(count):
        paper = make_paper(
            arxiv_id=f"{date:%y%m}.{first_number + offset:05d}",
            title=f"Paper number {first_number + offset}",
        )
        list_paper(paper, category=category, date=date)
        papers.append(paper)
    return papers


def announce(
    term: Term | None,
    *,
    date: dt.date,
    category: Category,
    hidden: bool = False,
    announce_type: str = Listing.AnnounceType.NEW,
    **fields,
) -> Paper:
    """A new paper listed in ``category`` on ``date``; with a term, also recorded as mentioning
    it (as the daily pipeline would). ``fields`` go to ``make_paper`` (title, abstract, …)."""
    paper = make_paper(hidden=hidden, **fields)
    list_paper(paper, category=category, date=date, announce_type=announce_type)
    if term is not None:
        Mention.objects.create(term=term, paper=paper, date=date)
    return paper


def _trade(place, when: dt.datetime | None, **arguments) -> Trade:
    trade = place(**arguments)
    # Backdating goes around the trade's own clock: only tests want a trade in the past.
    if when is not None:
        Trade.objects.filter(pk=trade.pk).update(created_at=when)
        trade.created_at = when
    return trade


def username(account: Account) -> str:
    """The trader's name; only the house accounts (fees, issuance) have no user."""
    assert account.user is not None, account
    return account.user.username


def buy(user, term: Term, shares: int, *, when: dt.datetime | None = None, key: str = "") -> Trade:
    """``user`` buys ``shares`` of ``term`` at any price, optionally dated ``when``."""
    key = key or uuid.uuid4().hex
    return _trade(trading.buy, when, user=user, term=term, shares=shares, max_cost=None, key=key)


def sell(user, term: Term, shares: int, *, when: dt.datetime | None = None, key: str = "") -> Trade:
    """``user`` sells ``shares`` of ``term`` at any price, optionally dated ``when``."""
    key = key or uuid.uuid4().hex
    return _trade(
        trading.sell, when, user=user, term=term, shares=shares, min_proceeds=None, key=key
    )


# Three topics with few shared words: a classifier that learned one of them ranks its papers
# first (the recommendation tests, the digest's "for you").
TOPICS = {
    "consensus": "consensus paxos raft replication quorum leader election byzantine fault",
    "serving": "inference serving gpu batching latency kernels transformer throughput",
    "storage": "storage compaction lsm tree ssd erasure coding durability disk",
}


def make_topical_papers(
    category: Category,
    *,
    per_topic: int = 12,
    days: int = 3,
    last_day: dt.date | None = None,
    title: str = "On",
) -> dict[str, list[Paper]]:
    """Papers of the three ``TOPICS``, mixed, listed over the ``days`` days up to ``last_day``
    (today): each abstract draws most words from its topic."""
    import random

    from django.utils import timezone

    rng = random.Random(7)
    last_day = last_day or timezone.localdate()
    made: dict[str, list[Paper]] = {name: [] for name in TOPICS}
    for n in range(per_topic):
        for name, words in TOPICS.items():
            vocabulary = words.split()
            abstract = " ".join(rng.choice(vocabulary) for _ in range(30)) + " we study it."
            paper = make_paper(title=f"{title} {rng.choice(vocabulary)} {n}", abstract=abstract)
            list_paper(paper, category=category, date=last_day - dt.timedelta(days=n % days))
            made[name].append(paper)
    return made
