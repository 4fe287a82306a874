"""The sample's demo market: a few made-up traders who traded over the sample days, so that a
fresh local site shows what the market does (prices that moved, charts with history, dividends
paid, a leaderboard) instead of fifty terms at 1.00 credits and 0.0 %.

Only ``load_demo_market`` (run by ``load_sample``, on a local site) calls this. Everything
goes through the paths real traders use: accounts open with the starting grant
(``market.cash``), every trade is ``market.trading.buy``/``sell``, and the dividends are paid
by ``market.dividends`` when the sample days are ingested after each round, by the one rule.

Dates. The trade path stamps a trade with the database's clock (``now()`` in
``market_place_trade``) by design: nobody can trade in the past, so nobody can buy a dividend
already announced. The demo's rounds belong to the sample days, which are in the past, so each
demo trade, placed now, is then moved to its place in the round (the trade row and its ledger
transaction, nothing else: amounts, supplies and versions stay exactly as the trade path wrote
them). A round is placed in the hours before its listing day's announcement and in time
order, so the trades' times agree with their term versions, and the holdings at each
announcement instant, which the dividends pay, are the ones the round left. Only the demo's own
fresh trades are moved, never a person's; ``check_ledger`` proves the books afterwards.

Idempotent: each trade has a fixed client key (``demo:<round>:<n>``), so running a round again
returns the trades it placed and changes nothing.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from papers.calendar import submission_period_start

from . import trading
from .cash import open_account
from .models import Account, LedgerTransaction, Term, Trade

# (username, what kind of trader): the names say what they are, on every page that lists them.
DEMO_TRADERS: tuple[tuple[str, str], ...] = (
    ("demo-ada", "buys what the newest papers talk about"),
    ("demo-grace", "holds systems words for the long run"),
    ("demo-leslie", "trades consensus and replication"),
    ("demo-barbara", "takes profits quickly"),
)

# Each trader's favourite terms (phrases of the starter set); picks outside it are random.
FAVOURITES: dict[str, tuple[str, ...]] = {
    "demo-ada": (
        "LLM inference",
        "KV cache",
        "GPU",
        "speculative decoding",
        "large language model",
    ),
    "demo-grace": ("scheduling", "serverless", "RDMA", "HPC", "Kubernetes", "cloud"),
    "demo-leslie": ("consensus", "Byzantine", "Raft", "replication", "state machine replication"),
    "demo-barbara": ("GPU", "federated learning", "energy efficiency", "edge computing", "MPI"),
}

# A round's trades are spread over the hours before the announcement it precedes.
ROUND_HOURS = 18
TRADES_PER_TRADER = 4


@dataclass(frozen=True, slots=True)
class RoundResult:
    label: str
    placed: int  # trades placed now
    repeated: int  # trades this round had placed before (a re-run)


def demo_users() -> list:
    """The demo traders, created (with unusable passwords: nobody signs in as them) and their
    accounts opened and marked as demo."""
    User = get_user_model()
    users = []
    for username, about in DEMO_TRADERS:
        user, created = User.objects.get_or_create(
            username=username, defaults={"first_name": "Demo", "last_name": about}
        )
        if created:
            user.set_unusable_password()
            user.save(update_fields=["password"])
        open_account(user=user)
        Account.objects.filter(user=user).update(demo=True)
        users.append(user)
    return users


def backdate_accounts(*, users, at: dt.datetime) -> None:
    """Date the demo traders' joining and starting grants ``at`` (before their first trade), so
    that their histories read in order."""
    User = get_user_model()
    accounts = Account.objects.filter(user__in=users)
    User.objects.filter(pk__in=[u.pk for u in users]).update(date_joined=at)
    LedgerTransaction.objects.filter(
        kind=LedgerTransaction.Kind.GRANT, entries__account__in=accounts
    ).update(created_at=at)
    accounts.update(created_at=at)


def _plan(*, label: str, users, terms: dict[str, Term], moments: int) -> list[tuple]:
    """The round's orders, (user, phrase, side, shares), the same on every run of the round."""
    rng = random.Random(f"peer-revenue-demo:{label}")
    phrases = sorted(terms)
    orders = []
    for user in users:
        favourites = [p for p in FAVOURITES.get(user.username, ()) if p in terms]
        for _ in range(TRADES_PER_TRADER):
            pool = favourites if favourites and rng.random() < 0.75 else phrases
            phrase = rng.choice(pool)
            side = Trade.Side.SELL if rng.random() < 0.25 else Trade.Side.BUY
            orders.append((user, phrase, side, rng.randint(2, 18)))
    rng.shuffle(orders)
    return orders[:moments] if moments else orders


def play_round(*, label: str, ends_at: dt.datetime | None) -> RoundResult:
    """One round of demo trades. With ``ends_at``, dated over the ``ROUND_HOURS`` before it
    (in the past: see the module docstring); without, placed and dated now."""
    users = demo_users()
    terms = {term.phrase: term for term in Term.objects.listed()}
    if not terms:
        return RoundResult(label=label, placed=0, repeated=0)
    orders = _plan(label=label, users=users, terms=terms, moments=0)
    now = timezone.now()
    if ends_at is not None and ends_at > now:
        ends_at = None  # never date a trade in the future: place it now instead
    step = dt.timedelta(hours=ROUND_HOURS) / (len(orders) + 1)
    placed = repeated = 0
    for n, (user, phrase, side, shares) in enumerate(orders):
        term = terms[phrase]
        key = f"demo:{label}:{n}"
        if side == Trade.Side.SELL:
            held = trading.holding(user, term)
            if held == 0:
                side = Trade.Side.BUY
            shares = min(shares, held) if held else shares
        try:
            if side == Trade.Side.BUY:
                trade = trading.buy(user=user, term=term, shares=shares, max_cost=None, key=key)
            else:
                trade = trading.sell(
                    user=user, term=term, shares=shares, min_proceeds=None, key=key
                )
        except trading.TradeError:
            continue  # out of cash, or a term halted by an admin: a person would skip it too
        if getattr(trade, "repeated", False):
            repeated += 1
            continue
        placed += 1
        if ends_at is not None:
            at = ends_at - dt.timedelta(hours=ROUND_HOURS) + step * (n + 1)
            _move(trade, at=at)
    return RoundResult(label=label, placed=placed, repeated=repeated)


@transaction.atomic
def _move(trade: Trade, *, at: dt.datetime) -> None:
    # Only a demo account's trade, just placed by this module (see the module docstring).
    assert Account.objects.filter(pk=trade.account_id, demo=True).exists(), trade
    Trade.objects.filter(pk=trade.pk).update(created_at=at)
    LedgerTransaction.objects.filter(pk=trade.transaction_id).update(created_at=at)


def round_before(day: dt.date) -> dt.datetime:
    """The moment a round for listing day ``day`` ends: an hour before its submission period
    began, so that its shares are held through the windows of the day's papers (market/windows.py)
    and the sample's holders are paid."""
    return submission_period_start(day) - dt.timedelta(hours=1)
