"""Buying and selling words: what traders see, and that refusals change nothing."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import override_settings

from market import curve, trading
from market.ledger import check_ledger
from market.models import Account, LedgerTransaction, Term, Trade

GRANT = 1_000_000_000


def test_every_new_user_starts_with_the_grant(trader, curator):
    assert trading.balance(trader) == GRANT
    assert trading.balance(curator) == GRANT
    grant = LedgerTransaction.objects.get(entries__account__user=trader)
    assert grant.kind == LedgerTransaction.Kind.GRANT
    assert Account.objects.get(kind="issuance").cash == -2 * GRANT
    assert check_ledger().ok


def test_createsuperuser_gets_the_grant_too(db, monkeypatch, django_user_model):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "a long enough passphrase 42")
    call_command(
        "createsuperuser", "--noinput", "--username", "boss", "--email", "boss@example.org"
    )
    assert trading.balance(django_user_model.objects.get(username="boss")) == GRANT


def test_a_new_term_is_listed_and_tradable_with_a_slug(db):
    term = Term.objects.create(phrase="KV cache")
    assert term.slug == "kv-cache"
    assert term.status == Term.Status.LISTED
    assert term.supply == term.reserve == 0
    assert term.price == term.p0 > 0


def test_buy_moves_cash_shares_reserve_and_fee(trader, kv_cache):
    q = trading.quote(term=kv_cache, side="buy", shares=10)
    trade = trading.buy(user=trader, term=kv_cache, shares=10, max_cost=q.total, key="k1")

    expected = curve.cost(0, 10, p0=kv_cache.p0, k=kv_cache.k)
    assert (trade.side, trade.shares, trade.amount) == ("buy", 10, expected)
    assert trade.fee == curve.fee(expected, basis_points=100) > 0
    assert (trade.supply_before, trade.supply_after, trade.term_version) == (0, 10, 1)
    assert trade.price_after == kv_cache.p0 + 10 * kv_cache.k
    assert q.total == trade.amount + trade.fee and q.supply_after == 10
    assert trading.balance(trader) == GRANT - trade.amount - trade.fee
    assert trading.holding(trader, kv_cache) == 10
    kv_cache.refresh_from_db()
    assert (kv_cache.supply, kv_cache.reserve, kv_cache.version) == (10, expected, 1)
    assert Account.objects.fees_collected() == trade.fee
    assert check_ledger().ok


def test_sell_returns_the_curve_amount_less_the_fee(trader, rival, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=5, max_cost=None, key="a")
    trading.buy(user=rival, term=kv_cache, shares=5, max_cost=None, key="b")
    before = trading.balance(trader)
    q = trading.quote(term=kv_cache, side="sell", shares=3)
    trade = trading.sell(user=trader, term=kv_cache, shares=3, min_proceeds=q.total, key="c")
    assert trade.amount == curve.proceeds(10, 3, p0=kv_cache.p0, k=kv_cache.k)
    assert trading.balance(trader) == before + trade.amount - trade.fee
    assert trading.holding(trader, kv_cache) == 2
    assert (trade.supply_before, trade.supply_after, trade.term_version) == (10, 7, 3)
    assert check_ledger().ok


def test_selling_everything_back_leaves_an_empty_reserve(trader, rival, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=7, max_cost=None, key="a")
    trading.buy(user=rival, term=kv_cache, shares=4, max_cost=None, key="b")
    trading.sell(user=trader, term=kv_cache, shares=7, min_proceeds=None, key="c")
    trading.sell(user=rival, term=kv_cache, shares=4, min_proceeds=None, key="d")
    kv_cache.refresh_from_db()
    assert kv_cache.supply == kv_cache.reserve == 0
    # The early buyer who sold first profits at the late seller's expense, less the fees.
    assert trading.balance(trader) > GRANT > trading.balance(rival)
    fees = Account.objects.fees_collected()
    assert trading.balance(trader) + trading.balance(rival) + fees == 2 * GRANT
    assert check_ledger().ok


def test_a_repeated_key_returns_the_original_trade_and_changes_nothing(trader, kv_cache, snapshot):
    first = trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="same")
    state = snapshot()
    again = trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="same")
    assert again.pk == first.pk
    assert snapshot() == state


def test_keys_are_per_trader(trader, rival, kv_cache):
    mine = trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="k")
    theirs = trading.buy(user=rival, term=kv_cache, shares=1, max_cost=None, key="k")
    assert mine.pk != theirs.pk


def test_quote_average_price_and_sell_quote(trader, kv_cache):
    q = trading.quote(term=kv_cache, side="buy", shares=2)
    assert q.average_price == (2 * kv_cache.p0 + kv_cache.k) // 2
    assert q.price_before == kv_cache.p0
    with pytest.raises(trading.InsufficientShares, match="Only 0 shares"):
        trading.quote(term=kv_cache, side="sell", shares=1)


# Refusals: each one names what to do, and leaves every balance as it was. -------------------


def refuse(snapshot, error, match, call):
    state = snapshot()
    with pytest.raises(error, match=match) as excinfo:
        call()
    assert snapshot() == state
    assert isinstance(excinfo.value, trading.TradeError)
    return excinfo.value


def test_buying_more_than_you_can_afford_is_refused(trader, kv_cache, snapshot):
    err = refuse(
        snapshot,
        trading.InsufficientCash,
        r"costs .* credits with the fee, but you have 1,000\.00 credits\. You can afford \d+",
        lambda: trading.buy(user=trader, term=kv_cache, shares=5_000, max_cost=None, key="x"),
    )
    affordable = int(str(err).rsplit("afford ", 1)[1].rstrip("."))
    trading.buy(user=trader, term=kv_cache, shares=affordable, max_cost=None, key="y")
    with pytest.raises(trading.InsufficientCash):
        trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="z")


def test_selling_shares_you_do_not_hold_is_refused(trader, rival, kv_cache, snapshot):
    trading.buy(user=rival, term=kv_cache, shares=5, max_cost=None, key="r")
    refuse(
        snapshot,
        trading.InsufficientShares,
        "You hold 0 shares of “KV cache” and cannot sell 1. Buy some first.",
        lambda: trading.sell(user=trader, term=kv_cache, shares=1, min_proceeds=None, key="x"),
    )
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="t")
    refuse(
        snapshot,
        trading.InsufficientShares,
        "Sell at most 2",
        lambda: trading.sell(user=trader, term=kv_cache, shares=3, min_proceeds=None, key="y"),
    )


def test_limits_include_the_fee(trader, kv_cache, snapshot):
    q = trading.quote(term=kv_cache, side="buy", shares=3)
    refuse(
        snapshot,
        trading.Slippage,
        "above your limit",
        lambda: trading.buy(user=trader, term=kv_cache, shares=3, max_cost=q.amount, key="x"),
    )
    trading.buy(user=trader, term=kv_cache, shares=3, max_cost=q.total, key="y")
    q = trading.quote(term=kv_cache, side="sell", shares=3)
    refuse(
        snapshot,
        trading.Slippage,
        "below your minimum",
        lambda: trading.sell(user=trader, term=kv_cache, shares=3, min_proceeds=q.amount, key="z"),
    )
    trading.sell(user=trader, term=kv_cache, shares=3, min_proceeds=q.total, key="w")


def test_the_price_moving_after_a_quote_is_refused(trader, rival, kv_cache, snapshot):
    q = trading.quote(term=kv_cache, side="buy", shares=10)
    trading.buy(user=rival, term=kv_cache, shares=10, max_cost=None, key="front-run")
    refuse(
        snapshot,
        trading.Slippage,
        "The price moved.*Check the new quote",
        lambda: trading.buy(user=trader, term=kv_cache, shares=10, max_cost=q.total, key="x"),
    )


@pytest.mark.parametrize("shares", [0, -1, 1.5, "3", True, None, 10_001])
def test_bad_quantities_are_refused(trader, kv_cache, snapshot, shares):
    refuse(
        snapshot,
        trading.InvalidQuantity,
        "Enter a whole number of shares from 1 to 10,000",
        lambda: trading.buy(user=trader, term=kv_cache, shares=shares, max_cost=None, key="x"),
    )
    refuse(
        snapshot,
        trading.InvalidQuantity,
        "whole number of shares",
        lambda: trading.sell(user=trader, term=kv_cache, shares=shares, min_proceeds=None, key="y"),
    )


@override_settings(MARKET_MAX_SHARES_PER_TRADE=50)
def test_the_per_trade_limit_comes_from_settings(trader, kv_cache, snapshot):
    refuse(
        snapshot,
        trading.InvalidQuantity,
        "from 1 to 50",
        lambda: trading.buy(user=trader, term=kv_cache, shares=51, max_cost=None, key="x"),
    )


def test_halted_and_delisted_terms_do_not_trade(trader, kv_cache, snapshot):
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="before")
    Term.objects.filter(pk=kv_cache.pk).halt(reason="Investigating a pricing bug")
    refuse(
        snapshot,
        trading.TermNotTradable,
        "Trading in “KV cache” is halted \\(Investigating a pricing bug\\).*relisted",
        lambda: trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="x"),
    )
    refuse(
        snapshot,
        trading.TermNotTradable,
        "halted",
        lambda: trading.sell(user=trader, term=kv_cache, shares=1, min_proceeds=None, key="y"),
    )
    # A repeat of a trade made before the halt still answers with that trade.
    assert trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="before").pk
    Term.objects.filter(pk=kv_cache.pk).delist(reason="Merged into “KV caching”")
    refuse(
        snapshot,
        trading.TermNotTradable,
        "delisted and can no longer be traded",
        lambda: trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="z"),
    )
    Term.objects.filter(pk=kv_cache.pk).relist()
    trading.sell(user=trader, term=kv_cache, shares=2, min_proceeds=None, key="after")


@pytest.mark.parametrize("key", ["", None, "k" * 101, 7])
def test_a_trade_needs_a_key(trader, kv_cache, snapshot, key):
    refuse(
        snapshot,
        trading.InvalidRequest,
        "needs a key",
        lambda: trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key=key),
    )


def test_a_negative_limit_is_refused(trader, kv_cache, snapshot):
    refuse(
        snapshot,
        trading.InvalidRequest,
        "max_cost",
        lambda: trading.buy(user=trader, term=kv_cache, shares=1, max_cost=-1, key="x"),
    )


def test_adjust_balance_writes_a_reasoned_ledger_transaction(trader, curator, snapshot):
    account = Account.objects.get(user=trader)
    txn = trading.adjust_balance(
        account=account, amount=5_000_000, reason="Compensation for outage", by=curator
    )
    assert (txn.kind, txn.memo, txn.created_by) == (
        "adjustment",
        "Compensation for outage",
        curator,
    )
    assert trading.balance(trader) == GRANT + 5_000_000
    refuse(
        snapshot,
        trading.InsufficientCash,
        "would make it negative. Remove at most 1,005.00 credits",
        lambda: trading.adjust_balance(account=account, amount=-GRANT * 2, reason="oops"),
    )
    refuse(
        snapshot,
        trading.InvalidRequest,
        "Say why",
        lambda: trading.adjust_balance(account=account, amount=1, reason="  "),
    )
    assert check_ledger().ok


def test_a_user_from_before_the_market_gets_an_account_on_first_trade(django_user_model, kv_cache):
    # bulk_create sends no post_save, like users created before the market app existed.
    (old_timer,) = django_user_model.objects.bulk_create([django_user_model(username="old")])
    assert not Account.objects.filter(user=old_timer).exists()
    trade = trading.buy(user=old_timer, term=kv_cache, shares=1, max_cost=None, key="x")
    assert Trade.objects.get().pk == trade.pk
    assert trading.balance(old_timer) == GRANT - trade.amount - trade.fee
    assert check_ledger().ok
