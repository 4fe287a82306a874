"""The lived-in sample: `load_sample` on a local site leaves a market that has been traded over
the sample days, by demo traders marked as such, with dividends paid by the one rule."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from market.ledger import check_ledger
from market.models import Account, DividendEvent, LedgerTransaction, Term, Trade
from papers.calendar import announced_at, latest_listing_days
from papers.management.commands import load_sample
from papers.models import Listing
from tests.html import Page, page_text
from tests.market.state import market_state


@pytest.fixture
def local_site(settings):
    # The demo belongs to local sites; the test runner turns DEBUG off.
    settings.DEBUG = True
    return settings


@pytest.fixture
def sample(local_site, cs_dc, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", verbosity=0)


def test_the_sample_market_has_traded_over_the_sample_days(sample, client):
    demo = Account.objects.filter(demo=True)
    assert demo.count() == 4
    assert not Account.objects.filter(demo=False, kind="user").exists()
    days = sorted(set(DividendEvent.objects.values_list("date", flat=True)))
    # Every sample day paid the demo holders, by the rule: the fewest shares each held at any
    # moment of the paper's submission window.
    assert len(days) == 3
    for day in days:
        paid = DividendEvent.objects.filter(date=day, shares__gt=0)
        assert paid.exists(), day
        for event in paid:
            trades = list(Trade.objects.filter(term=event.term, created_at__lte=event.announced_at))
            moments = [event.window_opens_at] + [
                t.created_at for t in trades if t.created_at > event.window_opens_at
            ]

            def held(account_id: int, at, trades=trades) -> int:
                return sum(
                    t.shares if t.side == "buy" else -t.shares
                    for t in trades
                    if t.account_id == account_id and t.created_at <= at
                )

            through = [
                min(held(account_id, at) for at in moments)
                for account_id in {t.account_id for t in trades}
            ]
            assert event.shares == sum(n for n in through if n > 0)
    # The trades are spread over the days before each announcement and today.
    trade_days = {t.date() for t in Trade.objects.values_list("created_at", flat=True)}
    assert len(trade_days) >= 4
    assert check_ledger().ok

    market = page_text(client.get("/market/"))
    # Prices moved, and the table says by how much (the live round traded in the last day).
    assert sum(term.price != term.p0 for term in Term.objects.all()) >= 10
    assert "+" in market
    gpu = Term.objects.get(phrase="GPU")
    assert gpu.supply > 0
    term_page = page_text(client.get(gpu.get_absolute_url()))
    mentioned = re.search(r"(\d+) mentioning papers? since it was listed", term_page)
    assert mentioned and int(mentioned[1]) >= 5, term_page

    board = client.get("/leaderboard/")
    assert board.status_code == 200
    assert page_text(board).count("demo") >= 4


def test_loading_the_sample_again_changes_nothing(sample, django_capture_on_commit_callbacks):
    before = market_state()
    trades = Trade.objects.count()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", verbosity=0)
    assert Trade.objects.count() == trades
    assert market_state() == before
    assert check_ledger().ok


def test_the_sample_ends_on_the_latest_listing_day_so_the_market_looks_live(sample, client):
    # The bundled feeds are of three days in November 2026; they are listed on the last three
    # listing days instead, the last of them the one announced most recently.
    days = sorted(set(Listing.objects.values_list("date", flat=True)))
    assert days == latest_listing_days(timezone.now(), 3)
    assert announced_at(days[-1]) <= timezone.now() < announced_at(days[-1]) + dt.timedelta(days=4)
    listing = Page.parse(client.get("/list/cs.DC/").content.decode())
    recent = {href for href, _ in listing.links() if href.startswith("/list/cs.DC/2")}
    assert {f"/list/cs.DC/{day:%Y-%m-%d}/" for day in days} <= recent

    # The table's one-day and seven-day changes differ: the earlier rounds are days old.
    page = Page.parse(client.get("/market/?sort=-volume").content.decode())
    header = page.one("thead").texts("th")
    one_day, seven_days = header.index("1 day"), header.index("7 days")
    rows = [row for row in page.one("tbody").rows() if row]
    differ = [row[0] for row in rows if row[one_day] != row[seven_days]]
    assert len(differ) >= 5, rows


def test_a_later_load_keeps_the_days_of_the_first(
    sample, monkeypatch, django_capture_on_commit_callbacks
):
    listings = sorted(Listing.objects.values_list("paper__arxiv_id", "date"))
    state = market_state()
    later = timezone.now() + dt.timedelta(days=9)
    monkeypatch.setattr(load_sample.timezone, "now", lambda: later)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", verbosity=0)
    assert sorted(Listing.objects.values_list("paper__arxiv_id", "date")) == listings
    assert market_state() == state


def test_no_demo_in_production(settings, cs_dc, django_capture_on_commit_callbacks):
    settings.DEBUG = False
    with pytest.raises(CommandError, match="local site only"):
        call_command("load_demo_market", verbosity=0)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", verbosity=0)
    assert not Account.objects.filter(demo=True).exists()
    assert not Trade.objects.exists()
    assert not LedgerTransaction.objects.filter(kind="dividend").exists()


def test_the_popover_quote_is_the_readers_own_and_never_kept(client, trader, password, db):
    term = Term.objects.create(phrase="KV cache")
    signed_out = client.get(f"/market/{term.slug}/offer.json?next=/list/cs.DC/").json()
    assert not signed_out["signed_in"] and "offers" not in signed_out
    assert signed_out["start"]["signup"] == "/accounts/signup/?next=%2Flist%2Fcs.DC%2F"
    client.login(username=trader.username, password=password)
    response = client.get(f"/market/{term.slug}/offer.json?next=//evil.example/")
    assert response["Cache-Control"] == "no-store"
    data = response.json()
    assert [(o["side"], o["shares"]) for o in data["offers"]] == [
        ("buy", 1),
        ("buy", 3),
        ("buy", 10),
    ]
    assert data["next"] == ""  # another site's address is not a way back
    three = data["offers"][1]
    posted = client.post(
        data["trade_url"],
        {k: three[k] for k in ("side", "shares", "limit", "key")} | {"next": "/list/cs.DC/"},
    )
    assert posted.status_code == 302 and posted["Location"] == "/list/cs.DC/"
    term.refresh_from_db()
    assert term.supply == 3
    assert check_ledger().ok
