"""No trading on what only authors know: a share bought after a paper was submitted and before
it was announced earns nothing from that paper, whoever bought it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.test import override_settings

from market import trading
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import DividendEvent, Term
from papers.models import Listing
from tests.factories import buy, list_paper, make_paper, sell
from tests.html import page_text
from tests.market.dividend_day import (
    DAY,
    DIVIDEND,
    listed_early,
    ny,
    paper_of_the_day,
)

ANNOUNCED = ny("2026-11-24 20:00")
PERIOD_OPENS = ny("2026-11-23 14:00")


@pytest.fixture
def kv(kv_cache: Term) -> Term:
    return listed_early(kv_cache)


@pytest.fixture
def reader(django_user_model):
    return django_user_model.objects.create_user("rosa", "rosa@example.org", "x" * 12)


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_share_bought_inside_the_window_earns_nothing_from_that_paper(
    cs_dc, kv, trader, rival, reader
):
    submitted = paper_of_the_day(cs_dc, submitted="2026-11-23 16:00")
    buy(trader, kv, 10, when=ny("2026-11-23 09:00"))  # before the submission
    buy(rival, kv, 7, when=ny("2026-11-23 16:30"))  # after it: only the authors knew
    buy(reader, kv, 3, when=ny("2026-11-24 21:00"))  # after the announcement
    before = {user: trading.balance(user) for user in (trader, rival, reader)}

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == before[trader] + 10 * DIVIDEND
    assert trading.balance(rival) == before[rival]
    assert trading.balance(reader) == before[reader]
    event = DividendEvent.objects.get(term=kv, paper=submitted)
    assert event.shares == 10
    assert event.window_opens_at == ny("2026-11-23 16:00")
    assert event.window_source == DividendEvent.WindowSource.SUBMITTED
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_without_a_submission_time_the_window_opens_with_the_submission_period(
    cs_dc, kv, trader, rival
):
    feed_only = paper_of_the_day(cs_dc, submitted=None)
    buy(trader, kv, 4, when=PERIOD_OPENS - dt.timedelta(minutes=1))
    buy(rival, kv, 6, when=PERIOD_OPENS + dt.timedelta(minutes=1))
    before = trading.balance(trader), trading.balance(rival)

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert (trading.balance(trader), trading.balance(rival)) == (
        before[0] + 4 * DIVIDEND,
        before[1],
    )
    event = DividendEvent.objects.get(term=kv, paper=feed_only)
    assert (event.window_opens_at, event.window_source) == (
        PERIOD_OPENS,
        DividendEvent.WindowSource.PERIOD,
    )
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_the_shares_paid_are_the_fewest_held_at_any_moment_of_the_window(cs_dc, kv, trader):
    """Held 10, sold 6 inside the window and bought them back before the announcement: 4 were
    held right through, and only those are paid. Selling after the announcement still earns."""
    paper_of_the_day(cs_dc, submitted="2026-11-23 16:00")
    buy(trader, kv, 10, when=ny("2026-11-22 12:00"))
    sell(trader, kv, 6, when=ny("2026-11-23 18:00"))
    buy(trader, kv, 6, when=ny("2026-11-24 10:00"))
    sell(trader, kv, 10, when=ny("2026-11-24 20:30"))
    before = trading.balance(trader)

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == before + 4 * DIVIDEND
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_each_paper_of_a_day_has_its_own_window(cs_dc, kv, trader):
    """Bought at 15:00 Monday: before the first paper was submitted (16:00), but inside the
    period of the second, which came from the feed alone (opened at 14:00)."""
    dated = paper_of_the_day(cs_dc, submitted="2026-11-23 16:00", title="KV cache paging")
    undated = paper_of_the_day(cs_dc, submitted=None, title="KV cache offloading")
    buy(trader, kv, 5, when=ny("2026-11-23 15:00"))
    before = trading.balance(trader)

    pay_dividends_for_day(category=cs_dc, date=DAY)

    assert trading.balance(trader) == before + 5 * DIVIDEND
    shares = dict(DividendEvent.objects.filter(term=kv).values_list("paper_id", "shares"))
    assert shares == {dated.pk: 5, undated.pk: 0}
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_history_and_backfills_stay_unpaid(cs_dc, kv, trader):
    """Listings derived from the bulk history pay nothing, and neither does a day announced
    before the term was listed (a backfill), whatever was held."""
    old = make_paper(title="A KV cache from the archive")
    Listing.objects.create(
        category=cs_dc, paper=old, date=DAY, announce_type="new", approximate=True
    )
    buy(trader, kv, 8, when=ny("2026-10-01 09:00"))
    before = trading.balance(trader)

    assert pay_dividends_for_day(category=cs_dc, date=DAY).amount == 0
    assert not DividendEvent.objects.filter(paper=old).exists()

    earlier = dt.date(2026, 10, 7)
    backfilled = make_paper(title="An earlier KV cache")
    list_paper(backfilled, category=cs_dc, date=earlier)
    assert pay_dividends_for_day(category=cs_dc, date=earlier).amount == 0
    assert DividendEvent.objects.get(paper=backfilled).shares == 0
    assert trading.balance(trader) == before
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_the_rules_pages_worked_example(client, cs_dc, kv, django_user_model):
    """The worked example of /market/rules/, trade for trade, paid as the page says."""
    ana, ben, cy, dee = (
        django_user_model.objects.create_user(n) for n in ("ana", "ben", "cy", "dee")
    )
    paper_of_the_day(cs_dc, submitted="2026-11-23 16:00")
    buy(ana, kv, 10, when=ny("2026-11-20 11:00"))  # the Friday before
    buy(ben, kv, 7, when=ny("2026-11-23 17:00"))
    buy(cy, kv, 10, when=ny("2026-11-20 12:00"))
    sell(cy, kv, 6, when=ny("2026-11-23 18:00"))
    buy(cy, kv, 6, when=ny("2026-11-24 10:00"))
    buy(dee, kv, 3, when=ny("2026-11-24 21:00"))
    before = {user: trading.balance(user) for user in (ana, ben, cy, dee)}

    pay_dividends_for_day(category=cs_dc, date=DAY)

    gained = {user.username: trading.balance(user) - before[user] for user in before}
    assert gained == {"ana": 10 * DIVIDEND, "ben": 0, "cy": 4 * DIVIDEND, "dee": 0}
    text = page_text(client.get("/market/rules/"))
    assert "Ana held 10 shares through the whole window: she is paid for 10, 0.10 credits." in text
    assert "Cy held at least 4 at every moment of the window: he is paid for 4, 0.04 credits." in (
        text
    )
    assert check_ledger().ok
