"""Market integrity on a live site (issues 12 and 40): dividends go to those who held through a
paper's submission window, never backwards; refusals say what is true; no amount overflows 64
bits."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.management import call_command
from django.db.models import F
from django.test import override_settings
from django.urls import reverse

from market import cash, curve, trading
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import Account, DividendEvent, Entry, LedgerTransaction, Term
from market.units import parse_credits
from papers.calendar import announced_at, submission_period_start
from papers.models import Listing, Paper
from tests.factories import buy, sell
from tests.html import Page, page_text
from tests.market.pages import confirm, get_quote, hidden_fields
from tests.market.state import held_before_the_announcement, market_state

DIVIDEND = 50_000
# Friday 2 October 2026's listing, announced on Thursday 1 October at 20:00 in New York.
DAY = dt.date(2026, 10, 2)
ANNOUNCED = announced_at(DAY)
HOUR = dt.timedelta(hours=1)


def listed(phrase: str, *, at: dt.datetime) -> Term:
    term = Term.objects.create(phrase=phrase)
    Term.objects.filter(pk=term.pk).update(listed_at=at)
    term.refresh_from_db()
    return term


def mentioning_papers(category, n: int, *, phrase: str, date: dt.date = DAY) -> None:
    for i in range(n):
        paper = Paper.objects.create(
            arxiv_id=f"2610.{date.day:02d}{i:03d}",
            title=f"Paper {i}",
            abstract=f"We study the {phrase} of large systems.",
            primary_category=category.code,
        )
        Listing.objects.create(category=category, paper=paper, date=date, announce_type="new")


def test_the_announcement_instant_is_20_00_new_york_the_day_before():
    assert dt.datetime(2026, 10, 2, 0, 0, tzinfo=dt.UTC) == ANNOUNCED  # 20:00 EDT
    monday = announced_at(dt.date(2026, 11, 30))  # announced on Sunday evening, EST
    assert monday == dt.datetime(2026, 11, 30, 1, 0, tzinfo=dt.UTC)


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_holder_who_bought_after_the_announcement_gets_nothing_for_it(cs_dc, trader, rival):
    gpu = listed("GPU", at=ANNOUNCED - dt.timedelta(days=3))
    mentioning_papers(cs_dc, 2, phrase="GPU")
    buy(trader, gpu, 10, when=ANNOUNCED - HOUR)
    held_before_the_announcement(DAY)  # the trader's buy: before the papers' window opened
    buy(rival, gpu, 5, when=ANNOUNCED + HOUR)  # read arXiv's 20:00 mail, bought before ingest
    trader_before, rival_before = trading.balance(trader), trading.balance(rival)

    summary = pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == trader_before + 2 * 10 * DIVIDEND
    assert trading.balance(rival) == rival_before
    assert summary.amount == 2 * 10 * DIVIDEND
    assert set(DividendEvent.objects.values_list("shares", flat=True)) == {10}
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_holder_who_sold_after_the_announcement_is_paid_for_what_they_held(cs_dc, trader, rival):
    gpu = listed("GPU", at=ANNOUNCED - dt.timedelta(days=3))
    mentioning_papers(cs_dc, 3, phrase="GPU")
    buy(trader, gpu, 8, when=ANNOUNCED - dt.timedelta(days=1))
    held_before_the_announcement(DAY)  # held 8 when the papers' window opened
    sell(trader, gpu, 3, when=ANNOUNCED - HOUR)  # inside the window: 5 held through it
    buy(rival, gpu, 2, when=ANNOUNCED)  # inside the window (its closing instant): not paid
    sell(trader, gpu, 5, when=ANNOUNCED + HOUR)  # sold out before the ingest ran
    before, rival_before = trading.balance(trader), trading.balance(rival)
    assert trading.holding(trader, gpu) == 0

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == before + 3 * 5 * DIVIDEND
    assert trading.balance(rival) == rival_before
    assert set(DividendEvent.objects.values_list("shares", flat=True)) == {5}
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_backfill_of_days_before_the_listing_pays_nothing(client, cs_dc, trader):
    gpu = listed("GPU", at=ANNOUNCED + HOUR)  # listed an hour after Friday's announcement
    buy(trader, gpu, 10, when=ANNOUNCED + 2 * HOUR)
    mentioning_papers(cs_dc, 2, phrase="GPU")  # Friday: announced before the listing
    # Tuesday: its submission period opens on Friday at 14:00 New York, after the buy, so the
    # shares are held through its window (Monday's period opened on Thursday, before the listing).
    next_day = DAY + dt.timedelta(days=4)
    mentioning_papers(cs_dc, 1, phrase="GPU", date=next_day)
    before = trading.balance(trader)

    backfill = pay_dividends_for_day(category=cs_dc, date=DAY)
    assert backfill.amount == 0 and trading.balance(trader) == before
    # Each pair is recorded once, unpaid, so a re-run looks at them no more.
    assert DividendEvent.objects.filter(date=DAY, shares=0, transaction=None).count() == 2
    assert pay_dividends_for_day(category=cs_dc, date=DAY).amount == 0

    pay_dividends_for_day(category=cs_dc, date=next_day)
    assert trading.balance(trader) == before + 10 * DIVIDEND
    assert check_ledger().ok

    text = page_text(client.get(gpu.get_absolute_url()))
    assert "1 mentioning paper since it was listed" in text
    assert "Before it was listed" in text
    assert "2 papers announced before “GPU” was listed" in text and "paid no dividend" in text


def test_load_sample_twice_after_a_purchase_pays_nothing_new(
    trader, cs_dc, django_capture_on_commit_callbacks
):
    """The sample days are older than any term listed now: they pay nothing, however often."""
    call_command("load_starter_terms", verbosity=0)
    bought = []
    for term in Term.objects.listed():
        buy(trader, term, 2)
        bought.append(term)
    before = trading.balance(trader)
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            call_command("load_sample", verbosity=0)
    assert Listing.objects.exists() and bought
    assert trading.balance(trader) == before
    assert not LedgerTransaction.objects.filter(kind="dividend").exists()
    assert check_ledger().ok


def test_the_rules_page_states_the_rule(client, db):
    text = page_text(client.get("/market/rules/"))
    assert (
        "A listing day D of arXiv is announced at 20:00 America/New_York on the calendar day "
        "before D (Sunday evening for Monday's listing)." in text
    )
    assert "at or after the moment the term was listed" in text
    assert "Each trader is paid for the fewest shares they held at any moment of the window" in text
    assert "it opens when the paper's first version was submitted and closes at its" in text
    assert (
        "Shares bought inside the window earn nothing from that paper, whoever bought them" in text
    )
    assert "shares sold after the announcement still earn it." in text


# check_ledger proves the rule --------------------------------------------------------------


@pytest.fixture
def paid(cs_dc, trader, rival) -> Term:
    gpu = listed("GPU", at=ANNOUNCED - dt.timedelta(days=3))
    mentioning_papers(cs_dc, 2, phrase="GPU")
    buy(trader, gpu, 6, when=ANNOUNCED - HOUR)
    buy(rival, gpu, 4, when=ANNOUNCED - HOUR)
    held_before_the_announcement(DAY)  # both held through the papers' window
    pay_dividends_for_day(category=cs_dc, date=DAY)
    assert check_ledger().ok
    return gpu


def test_check_ledger_fails_on_a_hand_corrupted_payout(paid, trader):
    """Someone paid the trader 5 shares' worth more, keeping the books balanced and the cached
    cash equal to the entries: only the dividend invariant can tell."""
    extra = 5 * 50_000
    account = Account.objects.get(user=trader)
    entry = Entry.objects.get(transaction__kind="dividend", account=account)
    Entry.objects.filter(pk=entry.pk).update(amount=F("amount") + extra)
    Entry.objects.filter(transaction=entry.transaction, account__kind="issuance").update(
        amount=F("amount") - extra
    )
    Account.objects.filter(pk=account.pk).update(cash=F("cash") + extra)
    Account.objects.filter(kind="issuance").update(cash=F("cash") - extra)

    report = check_ledger()
    assert not report.ok
    assert report.violations == [
        f"Dividend transaction {entry.transaction_id} paid account {account.pk} "
        f"{entry.amount + extra:,} µ¢, but the shares it held through the papers' windows earned "
        f"{entry.amount:,} µ¢ (off by +{extra:,} µ¢)."
    ]


def test_check_ledger_fails_when_a_payout_counted_shares_bought_after_it(paid, rival):
    late = buy(rival, paid, 3, when=ANNOUNCED + HOUR)
    assert check_ledger().ok  # after the announcement: rightly not paid
    # By hand, the late buy moved to before the window opened: the payout no longer matches.
    opens = submission_period_start(DAY)
    type(late).objects.filter(pk=late.pk).update(created_at=opens - 2 * HOUR)
    report = check_ledger()
    assert not report.ok
    assert any(
        "recorded 10 shares, but 13 were held through its window" in v for v in report.violations
    )


# Refusals that say what is true -----------------------------------------------------------


@pytest.fixture
def trader_client(client, trader, password):
    client.login(username=trader.username, password=password)
    return client


def test_confirming_again_says_the_trade_was_already_placed(trader_client, trader, kv_cache):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="2"))
    assert confirm(trader_client, fields).status_code == 302
    before = market_state()

    again = confirm(trader_client, fields)  # back to the confirm page, and submit it again

    assert again.status_code == 200 and market_state() == before
    text = page_text(again)
    trade = trader.market_account.trades.get()
    assert "This trade was already placed" in text
    assert f"{trade.created_at:%d %b %Y} at {trade.created_at:%H:%M} UTC".lstrip("0") in text
    assert "Nothing more was traded." in text and "Bought 2 shares" in text
    assert "/portfolio/" in [href for href, _ in Page.of(again).links()]


def test_selling_more_than_you_hold_says_you_hold_and_nothing_would_be_traded(
    trader_client, trader
):
    gpu = Term.objects.create(phrase="GPU")
    buy(trader, gpu, 6)  # everyone's supply is these 6 shares
    response = get_quote(trader_client, slug="gpu", side="sell", shares="50")
    text = page_text(response)
    assert "You hold 6 shares of “GPU” and cannot sell 50. Sell at most 6." in text
    assert "Nothing would be traded." in text
    assert "exist" not in text and "Nothing was traded" not in text


def test_parse_credits_takes_ascii_digits_only():
    assert parse_credits("3") == 3_000_000 and parse_credits("1,000.5") == 1_000_500_000
    for text in ("٣", "３", "1.٥", "²", "-٣", "⅓"):
        with pytest.raises(ValueError, match="use the digits 0 to 9"):
            parse_credits(text)


def test_parse_credits_takes_commas_between_thousands_only():
    assert parse_credits("12,345,678.5") == 12_345_678_500_000
    assert parse_credits("-1,000") == -1_000_000_000
    for text in ("1,5", "0,50", "1,00,000", ",5", "1,000,00"):
        with pytest.raises(ValueError, match="decimals with a point"):
            parse_credits(text)


# Nothing overflows 64 bits --------------------------------------------------------------------


def test_the_curve_bounds_keep_the_largest_reserve_in_64_bits():
    p0 = curve.MAX_P0
    k = curve.max_k(p0=1_000_000)
    assert curve.curve_fits(p0=p0, k=curve.max_k(p0=p0))
    assert not curve.curve_fits(p0=p0 + 1, k=0)
    assert curve.curve_fits(p0=1_000_000, k=k) and not curve.curve_fits(p0=1_000_000, k=k + 1)
    assert 2 * curve.reserve(curve.MAX_SUPPLY, p0=1_000_000, k=k) <= 2**63 - 1


def term_form(**values) -> dict:
    return {"phrase": "Huge", "aliases": "[]", "description": "", "status": "listed",
            "status_reason": "", **values}  # fmt: skip


def test_the_admin_refuses_a_curve_that_could_overflow(staff):
    url = reverse("admin:market_term_add")
    bigint = str(2**63 - 1)
    response = staff.post(url, term_form(p0=bigint, k=bigint))
    assert response.status_code == 200 and not Term.objects.exists()
    assert "The first share may cost at most 461,168,601,842 µ¢" in page_text(response)
    response = staff.post(url, term_form(p0="1000000", k=bigint))
    assert "the price step may be at most 92,233 µ¢" in page_text(response)
    assert not Term.objects.exists()


def test_the_largest_allowed_curve_refuses_for_cash_not_with_a_database_error(staff, trader):
    url = reverse("admin:market_term_add")
    p0 = curve.MAX_P0
    response = staff.post(url, term_form(p0=str(p0), k=str(curve.max_k(p0=p0))))
    assert response.status_code == 302
    term = Term.objects.get()
    with pytest.raises(trading.InsufficientCash, match="but you have 1,000.00 credits"):
        trading.buy(user=trader, term=term, shares=10_000, max_cost=None, key="k")
    assert check_ledger().ok


def test_the_admin_refuses_an_adjustment_that_could_overflow(staff, trader):
    account = Account.objects.get(user=trader)
    before = market_state()
    response = staff.post(
        reverse("admin:market_account_changelist"),
        {
            "action": "adjust_balance",
            ACTION_CHECKBOX_NAME: [account.pk],
            "apply": "1",
            "amount": "99,999,999,999,999",
            "reason": "Typo",
        },
    )
    assert response.status_code == 200
    assert "One adjustment moves at most 1,000,000,000.00 credits" in page_text(response)
    assert market_state() == before
    with pytest.raises(trading.InvalidQuantity):
        cash.adjust_balance(account=account, amount=10**20, reason="direct call")
