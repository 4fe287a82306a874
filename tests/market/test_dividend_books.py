"""check_ledger's dividend invariants against tampered books: each forgery below pays someone the
rules say must not be paid, and is made consistent enough that only the invariant it breaks
reports it (11: payments follow the recorded window; 13: no verified author paid for their own
paper; 14: no window opened later than its paper's)."""

from __future__ import annotations

import pytest
from django.db.models import F
from django.test import override_settings

from authorship.models import Claim
from market import ledger
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import Account, DividendEvent, Entry, WithheldDividend
from papers.models import Paper
from tests.factories import buy
from tests.market.dividend_day import DAY, DIVIDEND, listed_early, ny, paper_of_the_day


@pytest.fixture
def paid_day(cs_dc, kv_cache, trader, rival, django_user_model):
    """The trader wrote the paper (a verified claim) and held 12 shares; the rival held 5; an
    insider bought 7 after the submission. Paid by the rules: the rival alone."""
    listed_early(kv_cache)
    paper = paper_of_the_day(cs_dc)
    Claim.objects.create(user=trader, paper=paper, status=Claim.Status.APPROVED)
    insider = django_user_model.objects.create_user("ines")
    buy(trader, kv_cache, 12, when=ny("2026-11-20 09:00"))
    buy(rival, kv_cache, 5, when=ny("2026-11-20 10:00"))
    buy(insider, kv_cache, 7, when=ny("2026-11-23 17:00"))
    with override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND):
        pay_dividends_for_day(category=cs_dc, date=DAY)
    assert check_ledger().ok
    return DividendEvent.objects.get(paper=paper), insider


def pay_in_secret(event: DividendEvent, user, shares: int) -> None:
    """Credit ``user`` as the dividend's transaction would have, and record the shares as paid:
    the money balances, the cached cash agrees, the event counts them."""
    account = Account.objects.get(user=user)
    issuance = Account.objects.get(kind="issuance")
    amount = shares * event.per_share
    assert event.transaction is not None
    Entry.objects.create(
        transaction=event.transaction, account=account, asset="cash", amount=amount
    )
    Entry.objects.create(
        transaction=event.transaction, account=issuance, asset="cash", amount=-amount
    )
    Account.objects.filter(pk=account.pk).update(cash=F("cash") + amount)
    Account.objects.filter(pk=issuance.pk).update(cash=F("cash") - amount)
    DividendEvent.objects.filter(pk=event.pk).update(shares=F("shares") + shares)


def violations(invariant) -> list[str]:
    return check_ledger(invariants=[invariant]).violations


def test_a_verified_author_paid_for_their_own_paper_is_reported(paid_day, trader):
    event, _ = paid_day
    WithheldDividend.objects.filter(event=event).delete()
    pay_in_secret(event, trader, 12)
    assert not violations(ledger.dividends_follow_the_rule)  # the forgery is consistent…
    found = violations(ledger.authors_not_paid_for_their_own_words)
    assert len(found) == 1
    assert "(tobias) held 12 shares of term" in found[0]
    assert "a verified author was paid for their own words" in found[0]
    assert not check_ledger().ok


def test_a_withholding_from_someone_who_is_no_author_is_reported(paid_day, rival):
    event, _ = paid_day
    WithheldDividend.objects.create(
        event=event,
        account=Account.objects.get(user=rival),
        claim=WithheldDividend.objects.get(event=event).claim,
        shares=5,
    )
    found = violations(ledger.authors_not_paid_for_their_own_words)
    assert any("is not that account's claim to that paper" in line for line in found), found


def test_a_withholding_of_the_wrong_number_of_shares_is_reported(paid_day):
    event, _ = paid_day
    WithheldDividend.objects.filter(event=event).update(shares=11)
    found = violations(ledger.authors_not_paid_for_their_own_words)
    assert any("the account held 12 through the paper's window" in line for line in found)


def test_a_share_bought_inside_the_window_and_paid_is_reported(paid_day):
    """Paid to the insider without touching the window: the payments no longer follow it."""
    event, insider = paid_day
    pay_in_secret(event, insider, 7)
    found = violations(ledger.dividends_follow_the_rule)
    assert any("were held through its window" in line for line in found), found


def test_a_window_opened_late_to_pay_an_insider_is_reported(paid_day):
    """The forger moves the window's opening past the insider's purchase and pays them: the
    payments follow the recorded window, but the window is not the paper's."""
    event, insider = paid_day
    DividendEvent.objects.filter(pk=event.pk).update(window_opens_at=ny("2026-11-23 18:00"))
    pay_in_secret(event, insider, 7)
    assert not violations(ledger.dividends_follow_the_rule)
    found = violations(ledger.windows_are_the_papers)
    assert len(found) == 1
    assert "counted shares from 2026-11-23 23:00 UTC" in found[0]
    assert "opened at 2026-11-23 21:00 UTC (its submission)" in found[0]


def test_a_late_window_for_a_paper_without_a_submission_time_is_reported(paid_day):
    event, _ = paid_day
    Paper.objects.filter(pk=event.paper_id).update(submitted_at=None)
    DividendEvent.objects.filter(pk=event.pk).update(
        window_source=DividendEvent.WindowSource.PERIOD, window_opens_at=ny("2026-11-23 14:00")
    )
    assert not violations(ledger.windows_are_the_papers)
    DividendEvent.objects.filter(pk=event.pk).update(window_opens_at=ny("2026-11-23 15:00"))
    found = violations(ledger.windows_are_the_papers)
    assert any("(the start of its submission period)" in line for line in found), found
