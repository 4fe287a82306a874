"""Curating the market in the Django admin."""

from __future__ import annotations

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from market import trading
from market.ledger import check_ledger
from market.models import Account, LedgerTransaction, Term, Trade

GRANT = 1_000_000_000


def test_term_list_shows_status_supply_price_and_reserve(staff, trader, kv_cache):
    trading.buy(user=trader, term=kv_cache, shares=2, max_cost=None, key="k")
    page = staff.get(reverse("admin:market_term_changelist")).content.decode()
    assert "KV cache" in page and "Listed" in page
    assert "1.02" in page  # the price of the third share, in credits
    assert "2.01" in page  # the reserve: 1 + 1.01 credits


def test_halting_asks_for_a_reason_then_halts(staff, kv_cache):
    url = reverse("admin:market_term_changelist")
    form = staff.post(url, {"action": "halt", ACTION_CHECKBOX_NAME: [kv_cache.pk]})
    assert form.status_code == 200 and "Halt" in form.content.decode()
    staff.post(
        url,
        {
            "action": "halt",
            ACTION_CHECKBOX_NAME: [kv_cache.pk],
            "apply": "1",
            "reason": "Pricing bug under investigation",
        },
    )
    kv_cache.refresh_from_db()
    assert kv_cache.status == "halted"
    assert kv_cache.status_reason == "Pricing bug under investigation"
    staff.post(url, {"action": "relist", ACTION_CHECKBOX_NAME: [kv_cache.pk]})
    kv_cache.refresh_from_db()
    assert (kv_cache.status, kv_cache.status_reason) == ("listed", "")


def test_delisting_stops_trading(staff, trader, kv_cache):
    staff.post(
        reverse("admin:market_term_changelist"),
        {"action": "delist", ACTION_CHECKBOX_NAME: [kv_cache.pk], "apply": "1", "reason": "Dup"},
    )
    with pytest.raises(trading.TermNotTradable, match="delisted"):
        trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="k")


def test_curve_is_editable_only_while_no_shares_are_out(staff, trader, kv_cache):
    url = reverse("admin:market_term_change", args=[kv_cache.pk])
    assert 'name="p0"' in staff.get(url).content.decode()
    trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="k")
    page = staff.get(url).content.decode()
    assert 'name="p0"' not in page and 'name="k"' not in page


def test_saving_a_term_in_the_admin_never_rewinds_its_supply(staff, trader, kv_cache):
    url = reverse("admin:market_term_change", args=[kv_cache.pk])
    stale = Term.objects.get(pk=kv_cache.pk)  # loaded before the trade, like an open form
    trading.buy(user=trader, term=kv_cache, shares=3, max_cost=None, key="k")
    stale.description = "Keys and values of attention, kept between tokens."
    stale.save()
    response = staff.post(
        url,
        {
            "phrase": "KV cache",
            "aliases": '["KV-cache"]',
            "description": "Edited in the admin",
            "status": "listed",
            "status_reason": "",
        },
    )
    assert response.status_code == 302
    kv_cache.refresh_from_db()
    assert kv_cache.supply == 3 and kv_cache.aliases == ["KV-cache"]
    assert check_ledger().ok


def add_term(staff, **fields):
    return staff.post(
        reverse("admin:market_term_add"),
        {
            "phrase": "",
            "slug": "",
            "aliases": "[]",
            "description": "",
            "status": "listed",
            "status_reason": "",
            "p0": "1000000",
            "k": "10000",
            **fields,
        },
    )


def test_a_slug_typed_by_hand_cannot_be_a_fixed_page(staff):
    response = add_term(staff, phrase="Rules", slug="rules")
    assert response.status_code == 200
    assert (
        "“rules” cannot be a term&#x27;s slug: /market/rules/ is a fixed page of the site."
        in response.content.decode()
    )
    assert not Term.objects.exists()


def test_a_term_added_in_the_admin_takes_a_typed_slug_or_one_from_the_phrase(staff):
    assert add_term(staff, phrase="Consensus", slug="agreement").status_code == 302
    assert add_term(staff, phrase="Rules").status_code == 302
    assert dict(Term.objects.values_list("phrase", "slug")) == {
        "Consensus": "agreement",
        "Rules": "rules-term",
    }
    # Once saved, the slug is the term's address and stays put.
    term = Term.objects.get(phrase="Consensus")
    page = staff.get(reverse("admin:market_term_change", args=[term.pk])).content.decode()
    assert 'name="slug"' not in page


def test_adjusting_a_balance_writes_a_reasoned_transaction(staff, curator, trader):
    account = Account.objects.get(user=trader)
    url = reverse("admin:market_account_changelist")
    form = staff.post(url, {"action": "adjust_balance", ACTION_CHECKBOX_NAME: [account.pk]})
    assert "Amount (credits)" in form.content.decode()
    staff.post(
        url,
        {
            "action": "adjust_balance",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount": "12.5",
            "reason": "Refund for a failed page",
        },
    )
    assert trading.balance(trader) == GRANT + 12_500_000
    txn = LedgerTransaction.objects.get(kind="adjustment")
    assert (txn.memo, txn.created_by) == ("Refund for a failed page", curator)
    assert check_ledger().ok


def test_an_adjustment_below_zero_is_refused_and_explained(staff, trader):
    account = Account.objects.get(user=trader)
    response = staff.post(
        reverse("admin:market_account_changelist"),
        {
            "action": "adjust_balance",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount": "-2000",
            "reason": "Clawback",
        },
        follow=True,
    )
    assert "would make it negative" in response.content.decode()
    assert trading.balance(trader) == GRANT


def test_an_unparseable_amount_shows_the_form_again(staff, trader):
    account = Account.objects.get(user=trader)
    response = staff.post(
        reverse("admin:market_account_changelist"),
        {
            "action": "adjust_balance",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount": "1.2345678",
            "reason": "x",
        },
    )
    assert "at most six decimal places" in response.content.decode()
    assert trading.balance(trader) == GRANT


def test_trades_and_the_ledger_are_read_only(staff, trader, kv_cache):
    trade = trading.buy(user=trader, term=kv_cache, shares=1, max_cost=None, key="k")
    assert staff.get(reverse("admin:market_trade_changelist")).status_code == 200
    assert staff.get(reverse("admin:market_trade_add")).status_code == 403
    page = staff.get(reverse("admin:market_trade_change", args=[trade.pk])).content.decode()
    assert 'name="_save"' not in page
    txn_url = reverse("admin:market_ledgertransaction_change", args=[trade.transaction_id])
    assert 'name="_save"' not in staff.get(txn_url).content.decode()
    assert staff.post(reverse("admin:market_trade_delete", args=[trade.pk])).status_code == 403
    assert Trade.objects.count() == 1
