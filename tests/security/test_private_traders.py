"""A trader who hides their trader page is "a trader" wherever anyone can look (a term page's
holders and recent trades, the leaderboard), never their name or a link to it, and no public
page carries internal user ids. Pages are kept (peerrevenue.keep): hiding or showing the page
changes them on the very next request."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import Preferences
from tests.factories import buy, sell
from tests.html import Page

pytestmark = pytest.mark.django_db

TERM_PAGE = "/market/kv-cache/"


@pytest.fixture
def traded(trader, rival, kv_cache) -> None:
    buy(trader, kv_cache, 5)
    sell(trader, kv_cache, 1)
    buy(rival, kv_cache, 2)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def set_public(user, public: bool) -> None:
    """As the trader does it, in their settings."""
    signed_in(user).post("/accounts/settings/", {"public_trader_page": "on"} if public else {})
    assert Preferences.objects.get(user=user).public_trader_page is public


def sections(client) -> tuple[Page, list[list[str]], list[list[str]]]:
    page = Page.of(client.get(TERM_PAGE))
    holders = page.one("div", role="region", aria_labelledby="holders-heading").rows()[1:]
    trades = page.one("div", role="region", aria_labelledby="trades-heading").rows()[1:]
    return page, holders, trades


def test_a_private_trader_is_a_trader_on_a_term_page(client, trader, rival, traded):
    set_public(trader, False)
    page, holders, trades = sections(client)
    assert [row[0] for row in holders] == ["a trader", "rhea"]
    assert [row[1] for row in trades] == ["rhea", "a trader", "a trader"]
    assert trader.username not in page.text
    assert not [href for href, _ in page.links() if href.startswith("/traders/tobias")]
    assert ("/traders/rhea/", "rhea") in page.links()


def test_no_public_page_carries_user_ids(client, trader, rival, traded):
    ids = {str(trader.pk), str(rival.pk)}
    for url in (TERM_PAGE, "/leaderboard/", "/market/"):
        page = Page.of(client.get(url))
        holders_markup = [
            value
            for element in page.select("tr")
            for name, value in element.attrs.items()
            if name.startswith("data-")
        ]
        assert not ids & set(holders_markup), url
        assert "data-holder" not in client.get(url).content.decode(), url


def test_hiding_and_showing_the_page_changes_the_kept_term_page_at_once(
    client, trader, rival, traded
):
    looking = signed_in(rival)
    for reader in (client, looking):  # anonymous (whole page kept) and signed in (pieces kept)
        assert [row[0] for row in sections(reader)[1]] == ["tobias", "rhea"]
    set_public(trader, False)
    for reader in (client, looking):
        assert [row[0] for row in sections(reader)[1]] == ["a trader", "rhea"]
    set_public(trader, True)
    for reader in (client, looking):
        assert [row[0] for row in sections(reader)[1]] == ["tobias", "rhea"]


def test_the_trader_still_finds_their_own_row(trader, rival, traded):
    set_public(trader, False)
    page = Page.of(signed_in(trader).get(TERM_PAGE))
    mine = page.one("div", role="region", aria_labelledby="holders-heading").one("tr", cls="is-you")
    assert mine.cells()[0].text == "a trader"


def test_a_private_trader_is_a_trader_on_the_leaderboard_but_to_themselves(
    client, trader, rival, traded
):
    set_public(trader, False)
    board = Page.of(client.get("/leaderboard/"))
    names = [row[1] for row in board.rows()[1:]]
    assert "a trader" in names and "rhea" in names and "tobias" not in board.text
    assert not [href for href, _ in board.links() if href.startswith("/traders/tobias")]
    own = Page.of(signed_in(trader).get("/leaderboard/"))
    assert ("/traders/tobias/", "tobias") in own.links()


def test_a_change_made_outside_the_settings_page_shows_at_once_too(client, trader, traded):
    """The stamp is moved by the database: an admin's or a script's update counts the same."""
    assert [row[0] for row in sections(client)[1]][0] == "tobias"
    Preferences.objects.update_or_create(user=trader, defaults={"public_trader_page": True})
    Preferences.objects.filter(user=trader).update(public_trader_page=False)
    assert [row[0] for row in sections(client)[1]][0] == "a trader"
    Preferences.objects.filter(user=trader).delete()  # no preferences: public again
    assert [row[0] for row in sections(client)[1]][0] == "tobias"
