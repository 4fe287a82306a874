"""No pay for your own words: a verified author's shares earn no dividend from their own paper;
what is withheld is recorded and shown where the payout is explained and on their trader
page, and everyone else is paid as before."""

from __future__ import annotations

import pytest
from django.test import override_settings

from authorship.models import Claim
from market import trading
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import DividendEvent, Term, WithheldDividend
from papers.models import Paper
from tests.factories import buy, list_paper, make_paper
from tests.html import Page
from tests.market.dividend_day import (
    DAY,
    DIVIDEND,
    listed_early,
    ny,
    paper_of_the_day,
)


@pytest.fixture
def kv(kv_cache: Term) -> Term:
    return listed_early(kv_cache)


@pytest.fixture
def own_paper(cs_dc) -> Paper:
    return paper_of_the_day(cs_dc, authors=["Tobias Author"])


def claim(user, paper, status=Claim.Status.APPROVED) -> Claim:
    return Claim.objects.create(user=user, paper=paper, status=status, note="I wrote it.")


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_verified_author_is_not_paid_for_their_own_paper_and_everyone_else_is(
    client, cs_dc, kv, own_paper, trader, rival
):
    claim(trader, own_paper)
    buy(trader, kv, 12, when=ny("2026-11-20 09:00"))
    buy(rival, kv, 5, when=ny("2026-11-20 10:00"))
    before = trading.balance(trader), trading.balance(rival)

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == before[0]
    assert trading.balance(rival) == before[1] + 5 * DIVIDEND
    event = DividendEvent.objects.get(term=kv, paper=own_paper)
    assert event.shares == 5
    withheld = WithheldDividend.objects.get()
    assert (withheld.event, withheld.account.user, withheld.shares) == (event, trader, 12)
    assert check_ledger().ok

    # Where the payout is explained: the window and what was withheld.
    why = Page.of(client.get(f"{kv.get_absolute_url()}why/{own_paper.arxiv_id}/"))
    text = why.text
    assert "It paid 0.01 credits on each of the 5 shares held through its submission window" in (
        text
    )
    assert "Its submission window: from Mon 23 Nov 2026, 16:00 (the paper's submission)" in text
    assert "Tue 24 Nov 2026, 20:00, New York time" in text
    assert "Withheld: 12 shares held by the paper's verified authors earned nothing" in text

    # On the author's trader page.
    page = Page.of(client.get(f"/traders/{trader.username}/"))
    assert "Dividends withheld" in page.text
    assert "KV cache in Paging the KV cache (listed 25 Nov 2026): 12 shares" in page.text


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
@pytest.mark.parametrize(
    "status", [Claim.Status.PENDING, Claim.Status.REFUSED, Claim.Status.WITHDRAWN]
)
def test_a_claim_that_does_not_stand_withholds_nothing(cs_dc, kv, own_paper, trader, status):
    claim(trader, own_paper, status=status)
    buy(trader, kv, 3, when=ny("2026-11-20 09:00"))
    before = trading.balance(trader)
    pay_dividends_for_day(category=cs_dc, date=DAY)
    assert trading.balance(trader) == before + 3 * DIVIDEND
    assert not WithheldDividend.objects.exists()
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_an_author_is_paid_for_the_papers_of_others(cs_dc, kv, own_paper, trader):
    """Withholding is per paper: the author's shares still earn from a paper they did not
    write, announced the same day."""
    claim(trader, own_paper)
    other = make_paper(title="KV cache eviction", abstract="Not theirs.")
    list_paper(other, category=cs_dc, date=DAY)
    buy(trader, kv, 4, when=ny("2026-11-20 09:00"))
    before = trading.balance(trader)
    pay_dividends_for_day(category=cs_dc, date=DAY)
    assert trading.balance(trader) == before + 4 * DIVIDEND
    assert DividendEvent.objects.get(paper=other).shares == 4
    assert DividendEvent.objects.get(paper=own_paper).shares == 0
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_claim_approved_after_the_payout_is_dated_after_it(cs_dc, kv, own_paper, trader):
    """An approval is dated when it takes effect, after the dividend it did not stop: the
    ledger check tells "paid before the claim stood" from "paid a verified author"."""
    pending = claim(trader, own_paper, status=Claim.Status.PENDING)
    buy(trader, kv, 2, when=ny("2026-11-20 09:00"))
    before = trading.balance(trader)
    pay_dividends_for_day(category=cs_dc, date=DAY)
    Claim.objects.filter(pk=pending.pk).update(status=Claim.Status.APPROVED)
    pending.refresh_from_db()
    assert trading.balance(trader) == before + 2 * DIVIDEND
    assert pending.decided_at is not None
    assert pending.decided_at > DividendEvent.objects.get(paper=own_paper).created_at
    assert check_ledger().ok
