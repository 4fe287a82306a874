"""A claim approved while the day's dividends are paid, on real Postgres connections from real
threads: the author is never paid for that paper once the claim stands, nobody is paid twice,
and the books check out whichever came first."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest
from django.db import connection, transaction
from django.test import override_settings

from authorship import claims
from authorship.models import Claim
from market import trading
from market.dividends import pay_dividends_for_day
from market.ledger import check_ledger
from market.models import DividendEvent, Term, WithheldDividend
from papers.models import Category, Paper
from tests.factories import buy, list_paper, make_paper
from tests.market.dividend_day import DIVIDEND, ny
from tests.threads import run_threads

pytestmark = pytest.mark.django_db(transaction=True)

FIRST_DAY = dt.date(2026, 11, 3)  # a Tuesday


@pytest.fixture
def market(django_user_model, curator):
    category, _ = Category.objects.get_or_create(
        code="cs.DC", defaults={"name": "Distributed Computing", "archive_code": "cs"}
    )
    term = Term.objects.create(phrase="KV cache")
    Term.objects.filter(pk=term.pk).update(listed_at=ny("2026-10-01 09:00"))
    author = django_user_model.objects.create_user("aiko")
    reader = django_user_model.objects.create_user("remy")
    buy(author, term, 12, when=ny("2026-10-02 09:00"))
    buy(reader, term, 5, when=ny("2026-10-02 10:00"))
    return category, term, author, reader, curator


def a_day(category: Category, author, number: int) -> tuple[dt.date, Paper, Claim]:
    """Listing day ``number`` (weekdays from FIRST_DAY) with one paper by ``author``, who has
    asked (pending) to be named its author."""
    day = FIRST_DAY + dt.timedelta(days=number)
    while day.weekday() >= 5:
        day += dt.timedelta(days=2)
    paper = make_paper(title=f"KV cache paging, part {number}", abstract="We page it.")
    list_paper(paper, category=category, date=day)
    return day, paper, Claim.objects.create(user=author, paper=paper, note="Mine.")


def waiting_for_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def hold_until_the_other_waits(first, second) -> None:
    """Run ``first`` in a transaction that stays open until ``second``, started meanwhile in
    another thread, is seen waiting for a lock in PostgreSQL; then commit and let it finish."""
    started = threading.Event()
    release = threading.Event()
    pids: dict[str, int] = {}

    def run(i: int) -> None:
        if i == 0:
            with transaction.atomic():
                first()
                started.set()
                release.wait()
        else:
            started.wait()
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                pids["second"] = cursor.fetchone()[0]
            second()

    def watch() -> None:
        started.wait()
        try:
            while "second" not in pids or not waiting_for_a_lock(pids["second"]):
                time.sleep(0.005)  # polling PostgreSQL's view, not timing anything
        finally:
            release.set()
            connection.close()

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        run_threads(2, run)
    finally:
        release.set()
        watcher.join()


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_an_approval_during_a_payout_waits_for_it_and_is_dated_after_it(market):
    category, term, author, reader, curator = market
    day, paper, claim = a_day(category, author, 0)
    before = trading.balance(author), trading.balance(reader)

    hold_until_the_other_waits(
        lambda: pay_dividends_for_day(category=category, date=day),
        lambda: claims.approve(claims=Claim.objects.filter(pk=claim.pk), curator=curator),
    )

    claim.refresh_from_db()
    event = DividendEvent.objects.get(paper=paper)
    assert claim.status == Claim.Status.APPROVED
    # The payout came first: the claim did not stand yet, so the author was paid, once.
    assert trading.balance(author) == before[0] + 12 * DIVIDEND
    assert trading.balance(reader) == before[1] + 5 * DIVIDEND
    assert claim.decided_at is not None and claim.decided_at > event.created_at
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_a_payout_during_an_approval_waits_for_it_and_withholds(market):
    category, term, author, reader, curator = market
    day, paper, claim = a_day(category, author, 0)
    before = trading.balance(author), trading.balance(reader)

    hold_until_the_other_waits(
        lambda: claims.approve(claims=Claim.objects.filter(pk=claim.pk), curator=curator),
        lambda: pay_dividends_for_day(category=category, date=day),
    )

    assert trading.balance(author) == before[0]
    assert trading.balance(reader) == before[1] + 5 * DIVIDEND
    assert WithheldDividend.objects.get(event__paper=paper).shares == 12
    assert check_ledger().ok


@override_settings(MARKET_DIVIDEND_PER_MENTION=DIVIDEND)
def test_approvals_racing_two_payouts_of_each_day_never_pay_an_author_or_anyone_twice(market):
    """Each round: two runs of the day's payout (a retry beside the first) and the approval,
    started together. Whichever wins, the outcome is one of the two orders, never a mix."""
    category, term, author, reader, curator = market
    withheld_rounds = paid_rounds = 0
    for number in range(8):
        day, paper, claim = a_day(category, author, number)
        before = trading.balance(author), trading.balance(reader)

        def race(i: int, day=day, claim=claim) -> None:
            if i == 2:
                claims.approve(claims=Claim.objects.filter(pk=claim.pk), curator=curator)
            else:
                pay_dividends_for_day(category=category, date=day)

        run_threads(3, race)

        claim.refresh_from_db()
        event = DividendEvent.objects.get(term=term, paper=paper)  # one dividend, ever
        assert trading.balance(reader) == before[1] + 5 * DIVIDEND  # paid once
        gained = trading.balance(author) - before[0]
        if WithheldDividend.objects.filter(event=event).exists():
            withheld_rounds += 1
            assert claim.decided_at is not None
            assert gained == 0 and claim.decided_at <= event.created_at
        else:
            paid_rounds += 1
            assert claim.decided_at is not None
            assert gained == 12 * DIVIDEND and claim.decided_at > event.created_at
    assert withheld_rounds + paid_rounds == 8
    assert check_ledger().ok
