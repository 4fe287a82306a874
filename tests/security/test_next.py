"""Every form that takes a ``next`` page: whatever it says, the write is made once and the
reader lands on a page of this site. A bare word, another host, a script address or a relative
path falls back to the form's own default; a path of this site is followed."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from library.models import SavedPaper
from market import trading
from market.models import Follow, Order, Term, Trade
from tests.factories import buy, make_paper
from tests.market.pages import confirm, get_quote, hidden_fields

pytestmark = pytest.mark.django_db

HOSTILE = ["x", "portfolio", "//evil.example/", "/\\evil.example/", "javascript:alert(1)",
           "https://evil.example/", "/\t/evil.example/", "ok/"]  # fmt: skip
FOLLOWED = "/ok/"


def lands_on(response, expected: str) -> None:
    assert response.status_code in (302, 303), response.status_code
    assert response["Location"] == expected


@pytest.fixture
def term(db) -> Term:
    return Term.objects.create(phrase="KV cache")


@pytest.fixture
def trader_client(trader, term) -> Client:
    client = Client()
    client.force_login(trader)
    return client


def where(next_value: str, default: str) -> str:
    return FOLLOWED if next_value == FOLLOWED else default


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_a_trade_is_made_once_then_the_reader_is_sent_somewhere_safe(
    trader_client, trader, term, next_value
):
    fields = hidden_fields(get_quote(trader_client, side="buy", shares="2"))
    response = confirm(trader_client, fields, next=next_value)
    lands_on(response, where(next_value, "/market/kv-cache/"))
    assert list(Trade.objects.filter(account__user=trader).values_list("shares", flat=True)) == [2]


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_following_a_term_follows_it_then_redirects_safely(trader_client, trader, term, next_value):
    response = trader_client.post("/market/kv-cache/follow/", {"next": next_value})
    lands_on(response, where(next_value, "/market/kv-cache/"))
    assert Follow.objects.filter(user=trader, term=term).exists()


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_cancelling_an_order_cancels_it_then_redirects_safely(
    trader_client, trader, term, next_value
):
    order = trading.place_order(
        user=trader, term=term, side="buy", shares=3, limit_price=10_000, key="next-test"
    )
    response = trader_client.post("/orders/cancel/", {"order": order.pk, "next": next_value})
    lands_on(response, where(next_value, "/portfolio/"))
    assert Order.objects.get(pk=order.pk).state == Order.State.CANCELLED


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_saving_a_paper_saves_it_then_redirects_safely(trader_client, trader, next_value):
    paper = make_paper(arxiv_id="2611.00001")
    response = trader_client.post(
        f"/abs/{paper.arxiv_id}/save/", {"action": "save", "next": next_value}
    )
    lands_on(response, where(next_value, f"/abs/{paper.arxiv_id}/"))
    assert SavedPaper.objects.filter(user=trader, paper=paper).exists()


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_signing_up_makes_the_account_signs_in_and_redirects_safely(client, next_value):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "grace",
            "email": "grace@example.org",
            "password1": "a long unusual passphrase",
            "password2": "a long unusual passphrase",
            "next": next_value,
        },
    )
    lands_on(response, where(next_value, "/portfolio/"))
    grace = get_user_model().objects.get(username="grace")
    assert client.get("/portfolio/").context["user"] == grace  # signed in, not just made


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_logging_in_signs_in_and_redirects_safely(client, reader, password, next_value):
    response = client.post(
        f"/accounts/login/?next={next_value}",
        {"username": reader.username, "password": password, "next": next_value},
    )
    lands_on(response, where(next_value, "/"))
    assert client.get("/portfolio/").context["user"] == reader


@pytest.mark.parametrize("next_value", HOSTILE)
def test_the_login_and_signup_links_never_carry_a_hostile_next(client, term, next_value):
    """The word popover hands its ``next`` on to the login and sign-up links it offers."""
    start = client.get("/market/kv-cache/offer.json", {"next": next_value}).json()["start"]
    assert start["login"] == "/accounts/login/" and start["signup"] == "/accounts/signup/"
    page = client.get("/accounts/login/", {"next": next_value}).content.decode()
    assert 'name="next" value=""' in page


def test_a_signed_in_readers_popover_names_only_a_safe_next(trader_client, trader, term):
    buy(trader, term, 1)
    offer = trader_client.get("/market/kv-cache/offer.json", {"next": "x"}).json()
    assert offer["next"] == ""
    offer = trader_client.get("/market/kv-cache/offer.json", {"next": "/list/cs.DC/"}).json()
    assert offer["next"] == "/list/cs.DC/"


@pytest.mark.parametrize("next_value", [*HOSTILE, FOLLOWED])
def test_tagging_and_marking_a_paper_read_then_redirect_safely(trader_client, trader, next_value):
    paper = make_paper(arxiv_id="2611.00002")
    response = trader_client.post(
        f"/abs/{paper.arxiv_id}/tags/", {"tags": "to read", "next": next_value}
    )
    lands_on(response, where(next_value, "/library/"))
    saved = SavedPaper.objects.get(user=trader, paper=paper)
    assert [tag.name for tag in saved.tags.all()] == ["to read"]
    response = trader_client.post(f"/abs/{paper.arxiv_id}/read/", {"read": "1", "next": next_value})
    lands_on(response, where(next_value, "/library/"))
    saved.refresh_from_db()
    assert saved.read_at is not None
