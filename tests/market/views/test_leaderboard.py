"""The leaderboard: traders ranked, your own rank, and what it costs."""

from __future__ import annotations

import pytest

from market import leaderboards, stats
from market.units import format_credits
from market.views import leaderboard
from tests.factories import buy, username
from tests.html import Page, page_text
from tests.market.pages import count_queries

pytestmark = pytest.mark.django_db


def test_leaderboard_ranks_by_net_worth_minus_grants(client, trader, rival, kv_cache):
    buy(trader, kv_cache, 20)
    buy(rival, kv_cache, 20)
    page = Page.of(client.get("/leaderboard/"))
    expected = {username(a): a for a in leaderboards.leaderboard()}
    tobias = stats.portfolio(user=trader)
    assert expected["tobias"].score == tobias.gain
    assert page.row("1") == [
        "1",
        "tobias",
        format_credits(tobias.gain, unit=False, signed=True),
        format_credits(tobias.net_worth, unit=False),
        format_credits(tobias.cash, unit=False),
        format_credits(tobias.holdings_value, unit=False),
    ]
    assert page.row("2")[1] == "rhea"
    assert "2 traders, best first." in page.text


def test_leaderboard_shows_your_rank_even_off_the_first_page(
    client, password, django_user_model, kv_cache, monkeypatch
):
    monkeypatch.setattr(leaderboard, "ROWS_PER_PAGE", 2)
    users = [django_user_model.objects.create_user(f"t{n}", password=password) for n in range(4)]
    for user in users:
        buy(user, kv_cache, 10)  # each later buyer pays more: earlier is better
    client.login(username="t3", password=password)
    page = Page.of(client.get("/leaderboard/"))
    assert "You are #4 of 4, with a gain of" in page.text
    assert "t3" not in [page.row(str(rank))[1] for rank in (1, 2)]
    yours = Page.of(client.get("/leaderboard/?page=2")).one("tr", cls="is-you", aria_current="true")
    rank = yours.cells()[0]
    assert (rank.tag, rank.classes, rank.text) == ("td", ["num"], "4")


def test_leaderboard_for_someone_who_has_not_traded(client, reader, password, db):
    assert "No traders yet" in page_text(client.get("/leaderboard/"))
    client.login(username=reader.username, password=password)
    assert "You are not ranked yet" in page_text(client.get("/leaderboard/"))


def test_leaderboard_costs_a_fixed_number_of_queries(client, django_user_model, kv_cache):
    buy(django_user_model.objects.create_user("one"), kv_cache, 1)
    few = count_queries(client, "/leaderboard/")
    for n in range(20):
        buy(django_user_model.objects.create_user(f"more{n}"), kv_cache, 1)
    assert count_queries(client, "/leaderboard/") == few <= 2
