"""Public trader pages: what a trader holds, what they gained and what they traded lately.

A trader may hide their page (``Preferences.public_trader_page``); others then see only that it
is private, and the market's public pages (a term's holders and trades, the leaderboard) call
them "a trader", without their name or a link (market.public_names).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model

from authorship.models import Claim
from market import leaderboards, networth, stats
from market.models import Account, Trade
from market.withholding import Withheld, withheld_from

from .models import Preferences

RECENT_TRADES = 20


@dataclass(frozen=True, slots=True)
class TraderPage:
    trader: object  # the user whose page it is
    private: bool  # hidden from this viewer
    portfolio: stats.Portfolio | None = None
    standing: leaderboards.Standing | None = None
    trades: list[Trade] = field(default_factory=list)
    worth: list[networth.WorthPoint] = field(default_factory=list)
    papers: list = field(default_factory=list)  # the papers a curator verified are theirs
    withheld: list[Withheld] = field(default_factory=list)  # unpaid for their own words


def find_trader(username: str):
    """The active user with this name, or None."""
    return get_user_model().objects.filter(username=username, is_active=True).first()


def is_public(user) -> bool:
    preferences = Preferences.objects.filter(user=user).values("public_trader_page").first()
    return preferences is None or preferences["public_trader_page"]


def is_demo(user) -> bool:
    """Whether this is one of the sample market's made-up traders (market.demo)."""
    return Account.objects.filter(user=user, demo=True).exists()


def can_see(*, trader, viewer) -> bool:
    """The owner and staff always see the page; others only while it is public."""
    if viewer.is_authenticated and (viewer.pk == trader.pk or viewer.is_staff):
        return True
    return is_public(trader)


def trader_page(*, trader, viewer, today: dt.date) -> TraderPage:
    if not can_see(trader=trader, viewer=viewer):
        return TraderPage(trader=trader, private=True)
    trades = list(
        Trade.objects.filter(account__user=trader)
        .select_related("term")
        .order_by("-id")[:RECENT_TRADES]
    )
    portfolio = stats.portfolio(user=trader)
    return TraderPage(
        trader=trader,
        private=False,
        portfolio=portfolio,
        standing=leaderboards.standing(user=trader),
        trades=trades,
        worth=networth.net_worth_series(user=trader, today=today, now=portfolio.net_worth),
        papers=verified_papers(user=trader),
        withheld=withheld_from(user=trader),
    )


def verified_papers(*, user) -> list:
    """The shown papers a curator verified are this reader's, newest claim first."""
    claims = (
        Claim.objects.verified()
        .filter(user=user, paper__hidden=False)
        .select_related("paper")
        .order_by("-decided_at", "-id")
    )
    return [claim.paper for claim in claims]
