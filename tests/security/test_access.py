"""Who may do what, across the whole site, in one place.

- Trading, watching, the watching page, the portfolio and the settings need a login: without
  one they send you to log in and change nothing.
- The admin needs staff: anyone else is sent to the admin's login and changes nothing.
- One user can never see or change another's account: no address names an account, the only
  one naming a user is their public trader page (which they can hide), the portfolio is always
  your own, and another user's idempotency key is just a key.
- Every POST needs a CSRF token: the URLconf is walked, so a new view cannot forget it.
- Logging in, signing up and trading are rate limited with a clear message, and the limit
  cannot be dodged by forging the X-Forwarded-For header.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.urls.resolvers import RegexPattern, RoutePattern

from market import trading
from market.models import Account, Term, Trade
from papers.models import Paper, Watch
from papers.urls import ARXIV_ID
from tests.factories import buy, list_paper, make_paper
from tests.html import Page
from tests.security.helpers import site_state

pytestmark = pytest.mark.django_db


@pytest.fixture
def raft(db) -> Term:
    return Term.objects.create(phrase="Raft")


@pytest.fixture
def paper(cs_dc) -> Paper:
    import datetime as dt

    paper = make_paper(arxiv_id="2611.00001")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 24))
    return paper


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def is_login_redirect(response, *, login: str = "/accounts/login/") -> bool:
    return response.status_code == 302 and response.url.startswith(f"{login}?next=")


# Every address the site has ------------------------------------------------------------------

# A value for each URL parameter, by name (admin object ids are never looked up: the checks
# below refuse the request before any view runs).
SAMPLES = {
    "code": "cs.DC",
    "date": "2026-11-24",
    "arxiv_id": "2611.00001",
    "archive_code": "cs",
    "slug": "kv-cache",
    "uidb64": "MQ",
    "token": "set-password",
    "app_label": "market",
    "object_id": "1",
    "content_type_id": "1",
    "id": "1",
    "name": "Ada Lovelace",
    "username": "tobias",
    "pk": "1",
    "target": "paper:1",
    "order_id": "1",
    "file_name": "trades-2026-11-24.jsonl.gz",
}
# Parameters outside the admin: none of them can name an account; a username names only the
# public trader page, which shows what the trader chose to show (tests/accounts).
# An author's name is the byline's text, not a user of this site.
PUBLIC_PARAMETERS = {
    "code",
    "date",
    "arxiv_id",
    "archive_code",
    "slug",
    "uidb64",
    "token",
    "name",
    "username",
    # A comment's number and a thread's paper or term (discussion): never a user's.
    "pk",
    "target",
    # The API's: a dump's file name, public; an order's id, answered only to its owner's
    # token (anyone else's is "no such order", tests/api/test_acting.py).
    "file_name",
    "order_id",
}
# Unnamed regex routes cannot be reversed; each gets a concrete address here.
UNNAMED_REGEX_ROUTES = {
    rf"^abs/{ARXIV_ID}v\d+/$": "/abs/2611.00001v2/",
    "admin/(?P<url>.*)$": "/admin/nowhere/",
}


def _sample(parameter: re.Match[str]) -> str:
    return SAMPLES[parameter.group(1)]


def _walk(
    patterns, prefix: str = "", namespace: str | None = None, params: tuple[str, ...] = ()
) -> Iterator[tuple[str, str | None, str | None, tuple[str, ...]]]:
    for entry in patterns:
        pattern = entry.pattern
        names: tuple[str, ...] = ()
        if isinstance(pattern, RoutePattern):
            names = tuple(pattern.converters)
        elif isinstance(pattern, RegexPattern):
            names = tuple(pattern.regex.groupindex)
        route = prefix + str(pattern)
        if isinstance(entry, URLResolver):
            inner = ":".join(n for n in (namespace, entry.namespace) if n) or None
            yield from _walk(entry.url_patterns, route, inner, params + names)
        elif isinstance(entry, URLPattern):
            yield route, namespace, entry.name, params + names


def site_urls() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Every address in the URLconf, made concrete: {url: (route, parameter names)}."""
    urls = {}
    for route, namespace, name, params in _walk(get_resolver().url_patterns):
        if name:
            view = f"{namespace}:{name}" if namespace else name
            url = reverse(view, kwargs={param: SAMPLES[param] for param in params})
        elif "^" not in route and "(?P<" not in route:
            url = "/" + re.sub(r"<(?:\w+:)?(\w+)>", _sample, route)
        else:
            url = UNNAMED_REGEX_ROUTES[route]
        urls[url] = (route, params)
    return urls


SITE_URLS = site_urls()
ADMIN_URLS = sorted(url for url in SITE_URLS if url.startswith("/admin/"))
# The admin's own login and logout, and Django's public "view on site" redirect.
ADMIN_OPEN = {"/admin/login/", "/admin/logout/", "/admin/r/1/1/"}
# The site's forms and buttons: every one of them must be in the walk.
KNOWN_POSTS = {
    "/market/kv-cache/trade/",
    "/market/kv-cache/quote/",
    "/list/cs.DC/watch/",
    "/accounts/login/",
    "/accounts/logout/",
    "/accounts/signup/",
    "/accounts/settings/",
    "/accounts/password_change/",
    "/accounts/password_reset/",
    "/admin/market/term/",
    "/admin/market/term/candidates/",
    "/market/propose/",
    "/market/kv-cache/order/",
    "/market/kv-cache/follow/",
    "/orders/cancel/",
    "/abs/2611.00001/save/",
    "/abs/2611.00001/tags/",
    "/abs/2611.00001/read/",
    "/library/tags/",
    "/library/tags/rename/",
    "/library/tags/delete/",
    "/abs/2611.00001/note/",
    "/discussion/post/",
    "/discussion/follow/",
    "/discussion/comment/1/edit/",
    "/discussion/comment/1/delete/",
    "/discussion/comment/1/vote/",
    "/discussion/comment/1/report/",
    "/accounts/settings/tokens/",
}


def test_the_walk_finds_every_form_the_site_has():
    assert set(SITE_URLS) >= KNOWN_POSTS
    assert len(ADMIN_URLS) > 50


def test_no_address_outside_the_admin_names_a_user_or_an_account():
    parameters = {
        param
        for url, (_route, params) in SITE_URLS.items()
        if not url.startswith("/admin/")
        for param in params
    }
    assert parameters <= PUBLIC_PARAMETERS


# Logging in --------------------------------------------------------------------------------


def trade_order(key: str | None = None) -> dict[str, str]:
    return {"side": "buy", "shares": "1", "limit": str(10**12), "key": key or uuid.uuid4().hex}


@pytest.mark.parametrize(
    ("method", "url", "data", "back_to"),
    [
        ("get", "/watching/", {}, "/watching/"),
        ("get", "/portfolio/", {}, "/portfolio/"),
        ("get", "/accounts/settings/", {}, "/accounts/settings/"),
        ("post", "/accounts/settings/", {"daily_digest": "on"}, "/accounts/settings/"),
        ("get", "/accounts/password_change/", {}, "/accounts/password_change/"),
        ("get", "/accounts/settings/tokens/", {}, "/accounts/settings/tokens/"),
        ("post", "/accounts/settings/tokens/", {"name": "x"}, "/accounts/settings/tokens/"),
        ("post", "/list/cs.DC/watch/", {}, "/list/cs.DC/"),
        ("post", "/market/kv-cache/trade/", trade_order(), "/market/kv-cache/"),
        ("get", "/market/propose/", {}, "/market/propose/"),
        ("post", "/market/propose/", {"phrase": "RDMA", "reason": "x" * 20}, "/market/propose/"),
    ],
)
def test_pages_for_signed_in_users_send_others_to_log_in(
    client, cs_dc, kv_cache, method, url, data, back_to
):
    before = site_state()
    response = getattr(client, method)(url, data)
    assert is_login_redirect(response)
    # After logging in they come back to where they were (the category, not its POST button).
    assert response.url == f"/accounts/login/?next={back_to}"
    assert site_state() == before


def test_anyone_may_quote_but_only_a_signed_in_user_gets_a_confirm_button(client, kv_cache):
    response = client.get("/market/kv-cache/quote/", {"side": "buy", "shares": "3"})
    assert response.status_code == 200
    markup = response.content.decode()
    assert "Log in to trade" in markup
    assert "/market/kv-cache/trade/" not in markup
    assert client.get("/market/kv-cache/trade/").status_code == 405  # trading is POST only


# The admin ---------------------------------------------------------------------------------


@pytest.mark.parametrize("url", [url for url in ADMIN_URLS if url not in ADMIN_OPEN])
def test_admin_pages_need_staff(client, reader, url):
    assert is_login_redirect(client.get(url), login="/admin/login/"), url
    assert is_login_redirect(signed_in(reader).get(url), login="/admin/login/"), url


def test_a_non_staff_user_cannot_change_anything_through_the_admin(reader, kv_cache, paper):
    client = signed_in(reader)
    before = (site_state(), list(Paper.objects.values_list("pk", "title", "hidden")))
    attempts = [
        (f"/admin/auth/user/{reader.pk}/change/", {"username": reader.username,
                                                   "is_staff": "on", "is_superuser": "on"}),
        (f"/admin/market/term/{kv_cache.pk}/delete/", {"post": "yes"}),
        ("/admin/market/term/", {"action": "delist", "_selected_action": [kv_cache.pk],
                                 "apply": "1", "reason": "because"}),
        (f"/admin/papers/paper/{paper.pk}/change/", {"title": "Defaced", "hidden": "on"}),
        ("/admin/papers/paper/", {"action": "hide", "_selected_action": [paper.pk]}),
        (f"/admin/market/account/{Account.objects.get(user=reader).pk}/change/", {"cash": "1"}),
    ]  # fmt: skip
    for url, data in attempts:
        assert is_login_redirect(client.post(url, data), login="/admin/login/"), url
    assert (site_state(), list(Paper.objects.values_list("pk", "title", "hidden"))) == before
    reader.refresh_from_db()
    assert not reader.is_staff and not reader.is_superuser


# One user, one account ---------------------------------------------------------------------


def test_the_portfolio_shows_only_your_own_account(trader, rival, kv_cache, raft):
    buy(trader, kv_cache, 3)
    buy(rival, raft, 7)
    trading.adjust_balance(
        account=Account.objects.get(user=rival), amount=5_000_000, reason="Rival's private memo"
    )
    rival_account = Account.objects.get(user=rival)
    # However the address is dressed up, it is the signed-in trader's own portfolio.
    for query in ["", f"?user={rival.pk}", f"?account={rival_account.pk}", f"?user_id={rival.pk}"]:
        response = signed_in(trader).get(f"/portfolio/{query}")
        assert response.status_code == 200
        assert response.context["user"] == trader
        markup = response.content.decode()
        assert "KV cache" in markup
        assert "Raft" not in markup and "private memo" not in markup
    rival_page = signed_in(rival).get("/portfolio/").content.decode()
    assert "Raft" in rival_page and "private memo" in rival_page
    assert "KV cache" not in rival_page


def test_another_users_trade_key_is_just_a_key(trader, rival, kv_cache):
    """Keys make a repeated confirm trade once for its own account; reusing someone else's
    key neither returns their trade nor touches their account."""
    theirs = trading.buy(user=rival, term=kv_cache, shares=5, max_cost=None, key="shared-key")
    rival_cash = trading.balance(rival)
    response = signed_in(trader).post("/market/kv-cache/trade/", trade_order(key="shared-key"))
    assert response.status_code == 302
    mine = Trade.objects.get(account__user=trader, key="shared-key")
    assert mine.pk != theirs.pk and mine.shares == 1
    assert trading.holding(trader, kv_cache) == 1
    assert trading.holding(rival, kv_cache) == 5 and trading.balance(rival) == rival_cash
    assert Trade.objects.filter(account__user=rival).count() == 1


def test_a_password_reset_link_for_another_user_needs_their_token(client, reader, rival):
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    uid = urlsafe_base64_encode(force_bytes(rival.pk))
    response = client.get(f"/accounts/reset/{uid}/forged-token/", follow=True)
    assert response.status_code == 200
    assert "new_password1" not in response.content.decode()  # no form: the link is invalid
    response = client.post(
        f"/accounts/reset/{uid}/set-password/",
        {"new_password1": "taken over now", "new_password2": "taken over now"},
    )
    rival.refresh_from_db()
    assert not rival.check_password("taken over now")


# CSRF --------------------------------------------------------------------------------------


@pytest.fixture
def csrf_client(curator) -> Client:
    """A signed-in staff user whose browser sends no CSRF token (as a forged form would)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(curator)
    return client


def test_every_post_without_a_csrf_token_is_refused_and_changes_nothing(
    csrf_client, curator, cs_dc, kv_cache, paper
):
    before = site_state()
    refused = {}
    for url in SITE_URLS:
        response = csrf_client.post(url, {"side": "buy", "shares": "1", "daily_digest": "on"})
        if url.startswith("/api/"):
            # The API never acts for a session, only for a bearer token (which a page elsewhere
            # cannot make a browser send), so it needs no CSRF token: a session alone is
            # refused like any request without a token, and nothing changes.
            refused[url] = response.status_code in (401, 403, 404, 405) and response[
                "Content-Type"
            ].startswith("application/problem+json")
            continue
        refused[url] = response.status_code == 403 and b"CSRF verification failed" in (
            response.content
        )
    assert [url for url, ok in refused.items() if not ok] == []
    assert site_state() == before
    assert csrf_client.get("/portfolio/").context["user"] == curator  # logout was refused too


def test_the_same_posts_with_the_pages_csrf_token_go_through(trader, kv_cache, cs_dc):
    client = Client(enforce_csrf_checks=True)
    client.force_login(trader)
    quote = client.get("/market/kv-cache/quote/", {"side": "buy", "shares": "2"})
    confirm = Page.of(quote).form("/market/kv-cache/trade/")
    assert confirm["csrfmiddlewaretoken"]
    assert client.post("/market/kv-cache/trade/", confirm).status_code == 302
    assert trading.holding(trader, kv_cache) == 2
    category = Page.of(client.get("/list/cs.DC/"))
    token = category.first("input", name="csrfmiddlewaretoken").attrs["value"]
    assert client.post("/list/cs.DC/watch/", {"csrfmiddlewaretoken": token}).status_code == 302
    assert Watch.objects.filter(user=trader, category=cs_dc).exists()


# Rate limits -------------------------------------------------------------------------------

PROXY = "10.0.0.2"  # the proxy in front: REMOTE_ADDR of every request, which appends the client


@pytest.fixture(autouse=True)
def behind_one_proxy(settings):
    settings.RATELIMIT_TRUSTED_PROXIES = 1


def test_without_a_trusted_proxy_forwarding_headers_are_ignored(reader, settings):
    settings.RATELIMIT_TRUSTED_PROXIES = 0
    settings.RATELIMIT_LOGIN_PER_WINDOW = 2
    wrong = {"username": reader.username, "password": "guess"}
    for attempt in range(2):
        Client(HTTP_X_FORWARDED_FOR=f"198.51.100.{attempt}").post("/accounts/login/", wrong)
    response = Client(HTTP_X_FORWARDED_FOR="198.51.100.99").post("/accounts/login/", wrong)
    assert response.status_code == 429


def from_address(address: str, *, forged: str = "") -> dict[str, Any]:
    """The request headers behind the proxy for a client at ``address`` that sent its own
    X-Forwarded-For ``forged`` (the proxy appends the address it saw)."""
    chain = f"{forged}, {address}" if forged else address
    return {"REMOTE_ADDR": PROXY, "HTTP_X_FORWARDED_FOR": chain}


def test_login_is_limited_per_address_even_with_forged_forwarding_headers(
    reader, password, settings
):
    settings.RATELIMIT_LOGIN_PER_WINDOW = 3
    attacker = "203.0.113.9"
    wrong = {"username": reader.username, "password": "guess"}
    for attempt in range(3):
        client = Client(**from_address(attacker, forged=f"198.51.100.{attempt}"))
        assert client.post("/accounts/login/", wrong).status_code == 200
    client = Client(**from_address(attacker, forged="198.51.100.77"))
    right = {"username": reader.username, "password": password}
    response = client.post("/accounts/login/", right)
    assert response.status_code == 429
    assert "Too many attempts from your address" in response.content.decode()
    assert "_auth_user_id" not in client.session  # not logged in, even with the right password
    # Someone else, at another address, is not locked out.
    assert Client(**from_address("203.0.113.10")).post("/accounts/login/", right).status_code == 302


def test_signup_is_limited_per_address_even_with_forged_forwarding_headers(db, settings):
    settings.RATELIMIT_SIGNUP_PER_WINDOW = 2
    users = get_user_model().objects
    for attempt in range(3):
        client = Client(**from_address("203.0.113.9", forged=f"198.51.100.{attempt}"))
        response = client.post(
            "/accounts/signup/",
            {
                "username": f"bot{attempt}",
                "email": f"bot{attempt}@example.org",
                "password1": "a long unusual passphrase",
                "password2": "a long unusual passphrase",
            },
        )
    assert response.status_code == 429
    assert "Too many attempts from your address" in response.content.decode()
    assert sorted(users.values_list("username", flat=True)) == ["bot0", "bot1"]


def test_trading_is_limited_per_trader_with_a_clear_message(trader, rival, kv_cache, settings):
    settings.RATELIMIT_TRADES_PER_WINDOW = 2
    client = signed_in(trader)
    for _ in range(2):
        assert client.post("/market/kv-cache/trade/", trade_order()).status_code == 302
    before = site_state()
    response = client.post("/market/kv-cache/trade/", trade_order())
    assert response.status_code == 429
    text = response.content.decode()
    assert "You are trading too fast" in text and "Nothing was traded" in text
    assert site_state() == before
    # The limit is the trader's own: others trade on.
    assert signed_in(rival).post("/market/kv-cache/trade/", trade_order()).status_code == 302
