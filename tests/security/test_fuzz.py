"""Every form and URL parameter, fuzzed through the Django test client.

Two properties for each request, whatever it carries (any Unicode, NUL characters, huge,
negative, fractional and exponent numbers, whitespace, markup):

1. it never fails on the server: the response is below 500, and since the test client re-raises
   a view's exception, an unhandled error fails the test too;
2. a refused request changes nothing: people, cash, holdings, trades, ledger, watches and
   preferences (``site_state``) are exactly as before. A refusal is a 4xx or a form shown again
   with its errors, i.e. anything but the redirect that follows a successful POST. GET requests
   never change anything at all.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Callable
from urllib.parse import quote, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from market import trading
from market.models import Term, Trade
from papers.identifiers import ARXIV_ID
from papers.models import Paper, Watch
from tests.conftest import PASSWORD
from tests.factories import buy, make_listed_papers
from tests.html import Page
from tests.security.helpers import site_state

pytestmark = [
    pytest.mark.django_db,
    # Long fuzzed URLs make page-cache keys memcached would refuse; the site uses Redis.
    pytest.mark.filterwarnings("ignore::django.core.cache.backends.base.CacheKeyWarning"),
    # The paper admin's licence URLField, about Django 6's default scheme: not ours to test.
    pytest.mark.filterwarnings("ignore:The default scheme will be changed"),
]

FUZZ = settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

# Strings people (and scripts) type into number boxes, search fields and addresses.
AWKWARD = [
    "", " ", "\x00", "5\x00", "\x00\x00", "cs.DC\x00", "\t\r\n", "\u00a0", "\u200b", "\u202e",
    "-1", "0", "-0", "+1", "00001", "1e3", "1E+308", "1e-7", "-1e400", "9" * 30, "9" * 400,
    "9" * 5000, "1.5", ".5", "5.", "-0.0", "0.0000001", "NaN", "nan", "Infinity", "-inf",
    "１２", "٣", "²", "½", "0x10", "0b1", "1_000", "1,000", "1 000", " 5 ", "5\u00a0",
    "%00", "%", "%%", "../../etc/passwd", "..", ".", "/", "//", "\\", "😀", "null", "None",
    "[]", "{}", "true", "<script>alert(1)</script>", "' OR '1'='1", "buy", "sell", "BUY",
    "cs.DC", "2026-11-24", "2026-02-30", "0000-00-00", "9999-12-31", "0001-01-01",
]  # fmt: skip

numbers = st.one_of(
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.builds(lambda m, e: f"{m}e{e}", st.integers(-(10**6), 10**6), st.integers(-400, 400)),
)
unicode_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
hostile = st.one_of(
    st.sampled_from(AWKWARD),
    numbers,
    unicode_text,
    st.builds(lambda a, b: f"{a}\x00{b}", unicode_text, unicode_text),
)
pages = st.one_of(st.integers(-3, 5).map(str), hostile)


def mostly(
    valid: st.SearchStrategy[str], bad: st.SearchStrategy[str] = hostile
) -> st.SearchStrategy[str]:
    """A valid value three times in four, else a hostile one: so requests with one bad field,
    with several, and with none (which must succeed) all come up."""
    return st.integers(0, 3).flatmap(lambda n: valid if n else bad)


def segment(value: str) -> str:
    """A value as one URL path segment (a '/' inside it is escaped, as a browser would)."""
    return quote(value, safe="")


def assert_served(response) -> None:
    event(f"status {response.status_code}")  # --hypothesis-show-statistics: both branches run
    assert response.status_code < 500, response.status_code


def is_refusal(response) -> bool:
    # Every successful POST on the site redirects (post/redirect/get).
    return response.status_code != 302


@pytest.fixture(autouse=True)
def no_rate_limits(settings) -> None:
    """Fuzzing sends hundreds of requests; the limits have their own tests in test_access."""
    settings.RATELIMIT_LOGIN_PER_WINDOW = 10**9
    settings.RATELIMIT_SIGNUP_PER_WINDOW = 10**9
    settings.RATELIMIT_TRADES_PER_WINDOW = 10**9
    settings.RATELIMIT_QUOTES_PER_WINDOW = 10**9


@pytest.fixture
def listed(cs_dc) -> None:
    make_listed_papers(3, category=cs_dc, date=dt.date(2026, 11, 24))


@pytest.fixture
def term(db) -> Term:
    return Term.objects.create(phrase="KV cache")


@pytest.fixture
def trader_client(trader, rival, term) -> Client:
    """A trader who holds shares (so sells can succeed), next to a rival who holds some too."""
    buy(trader, term, 20)
    buy(rival, term, 5)
    client = Client()
    client.force_login(trader)
    return client


def get_changes_nothing(client: Client, url: str, params: dict | None = None) -> None:
    before = site_state()
    response = client.get(url, params or {})
    assert_served(response)
    assert site_state() == before, url


# Reader pages ------------------------------------------------------------------------------


@FUZZ
@given(
    code=mostly(st.just("cs.DC")),
    date=mostly(st.dates().map(dt.date.isoformat)),
    page=pages,
)
def test_category_listing_paths_and_pages(client, listed, code, date, page):
    get_changes_nothing(client, f"/list/{segment(code)}/", {"page": page})
    get_changes_nothing(client, f"/list/cs.DC/{segment(date)}/", {"page": page})
    get_changes_nothing(client, f"/list/{segment(code)}/feed/")


@FUZZ
@given(
    arxiv_id=st.one_of(
        st.from_regex(ARXIV_ID, fullmatch=True),  # what the paper URL routes
        hostile,
    ),
    version=st.one_of(st.integers(0, 10**30).map(str), hostile),
    archive=mostly(st.just("cs")),
)
def test_paper_and_archive_paths(client, listed, arxiv_id, version, archive):
    get_changes_nothing(client, f"/abs/{segment(arxiv_id)}/")
    get_changes_nothing(client, f"/abs/2611.00001v{segment(version)}/")
    get_changes_nothing(client, f"/archive/{segment(archive)}/")


@FUZZ
@given(page=pages)
def test_watching_page(client, reader, listed, page):
    client.force_login(reader)
    get_changes_nothing(client, "/watching/", {"page": page})


@FUZZ
@given(code=mostly(st.just("cs.DC")))
def test_watch_toggle(client, reader, cs_dc, code):
    client.force_login(reader)
    before = site_state()
    watching = Watch.objects.filter(user=reader, category=cs_dc).exists()
    response = client.post(f"/list/{segment(code)}/watch/")
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before
    else:
        assert code == "cs.DC"
        assert Watch.objects.filter(user=reader, category=cs_dc).exists() is not watching


# Market pages ------------------------------------------------------------------------------


@FUZZ
@given(
    sort=mostly(st.sampled_from(["price", "-price", "phrase", "-mentions"])),
    q=mostly(st.sampled_from(["kv", "cache", ""])),
    page=pages,
)
def test_market_index_parameters(client, term, sort, q, page):
    get_changes_nothing(client, "/market/", {"sort": sort, "q": q, "page": page})


quantities = mostly(st.integers(1, 50).map(str))
sides = mostly(st.sampled_from(["buy", "sell"]))


@FUZZ
@given(
    slug=mostly(st.just("kv-cache")),
    side=sides,
    shares=st.one_of(quantities, st.just("")),
    budget=mostly(st.one_of(st.just(""), st.integers(1, 10**6).map(str))),
    signed_in=st.booleans(),
)
def test_term_page_and_quotes(client, trader_client, slug, side, shares, budget, signed_in):
    """Quoting never trades: whatever the order says, nothing changes, GET or POST."""
    client = trader_client if signed_in else client
    order = {"side": side, "shares": shares, "budget": budget}
    get_changes_nothing(client, f"/market/{segment(slug)}/")
    get_changes_nothing(client, f"/market/{segment(slug)}/quote/", order)
    get_changes_nothing(client, f"/market/{segment(slug)}/quote.json", order)
    before = site_state()
    assert_served(client.post(f"/market/{segment(slug)}/quote/", order))
    assert site_state() == before


@FUZZ
@given(
    slug=mostly(st.just("kv-cache")),
    side=sides,
    shares=quantities,
    limit=mostly(st.one_of(st.integers(0, 10**12).map(str), st.just("0"))),
    key=mostly(st.one_of(st.uuids().map(lambda u: u.hex), st.just("setup"))),
)
def test_trade(trader_client, trader, rival, slug, side, shares, limit, key):
    before = site_state()
    rival_state = (trading.balance(rival), Trade.objects.filter(account__user=rival).count())
    response = trader_client.post(
        f"/market/{segment(slug)}/trade/",
        {"side": side, "shares": shares, "limit": limit, "key": key},
    )
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before
    else:
        assert response.url == "/market/kv-cache/"
        # Whatever happened, happened to the trader's own account.
        assert trading.balance(rival) == rival_state[0]
        assert Trade.objects.filter(account__user=rival).count() == rival_state[1]
        assert Trade.objects.filter(account__user=trader, key=key.strip()).exists()


@FUZZ
@given(page=pages)
def test_portfolio_and_leaderboard_pages(client, trader_client, page):
    get_changes_nothing(trader_client, "/portfolio/", {"page": page})
    get_changes_nothing(trader_client, "/leaderboard/", {"page": page})
    get_changes_nothing(client, "/leaderboard/", {"page": page})


# Accounts ----------------------------------------------------------------------------------

usernames = st.from_regex(r"[a-z][a-z0-9_.@+-]{2,20}", fullmatch=True)
NEW_PASSWORD = "a long unusual passphrase"
passwords = mostly(st.just(NEW_PASSWORD))


@st.composite
def signups(draw: st.DrawFn) -> dict[str, str]:
    password = draw(passwords)
    return {
        "username": draw(mostly(usernames)),
        "email": draw(mostly(usernames.map(lambda name: f"{name}@example.org"))),
        "password1": password,
        "password2": draw(mostly(st.just(password))),
    }


@FUZZ
@given(data=signups())
def test_signup(db, data):
    before = site_state()
    response = Client().post("/accounts/signup/", data)
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before
    else:
        # Stored as Django normalises it (NFKC: "ª" is stored as "a").
        username = get_user_model().normalize_username(data["username"])
        assert get_user_model().objects.filter(username=username).exists()


@FUZZ
@given(username=mostly(st.just("rosalind")), password=passwords, next_url=hostile)
def test_login(reader, username, password, next_url):
    reader.set_password(NEW_PASSWORD)
    reader.save()
    before = site_state()
    response = Client().post(
        "/accounts/login/", {"username": username, "password": password, "next": next_url}
    )
    assert_served(response)
    assert site_state() == before
    if not is_refusal(response):
        # Logged in, and sent somewhere on this site whatever `next` said.
        target = urlsplit(response["Location"])
        assert target.netloc in ("", "testserver") and target.scheme in ("", "http")
        assert not response["Location"].startswith(("//", "/\\", "\\"))


@FUZZ
@given(value=mostly(st.sampled_from(["on", "true", "false", "0", "1"])))
def test_preferences(client, reader, value):
    client.force_login(reader)
    before = site_state()
    response = client.post("/accounts/settings/", {"daily_digest": value})
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before


@FUZZ
@given(
    old=mostly(st.just(PASSWORD)),
    new1=passwords,
    new2=mostly(st.just(NEW_PASSWORD)),
)
def test_password_change(client, reader, password, old, new1, new2):
    client.force_login(reader)
    before = site_state()
    response = client.post(
        "/accounts/password_change/",
        {"old_password": old, "new_password1": new1, "new_password2": new2},
    )
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before
    else:
        reader.refresh_from_db()
        assert reader.check_password(new1)
        reader.set_password(password)  # as it was, for the next example
        reader.save()


@FUZZ
@given(email=mostly(st.just("rosalind@example.org")))
def test_password_reset_request(client, reader, email):
    before = site_state()
    response = client.post("/accounts/password_reset/", {"email": email})
    assert_served(response)
    assert site_state() == before  # asking for a reset email changes no account


def test_the_valid_values_the_fuzzers_mix_in_succeed(client, trader_client, reader, cs_dc):
    """Each fuzzed POST above treats a redirect as success; with every field valid it must
    be one, so the fuzzers exercise the success path as well as the refusals."""
    order = {"side": "buy", "shares": "1", "limit": str(10**12), "key": uuid.uuid4().hex}
    assert trader_client.post("/market/kv-cache/trade/", order).status_code == 302
    signup = {"username": "newcomer", "email": "newcomer@example.org"}
    signup |= {"password1": NEW_PASSWORD, "password2": NEW_PASSWORD}
    assert Client().post("/accounts/signup/", signup).status_code == 302
    login = {"username": "rosalind", "password": PASSWORD}
    assert Client().post("/accounts/login/", login).status_code == 302
    client.force_login(reader)
    assert client.post("/list/cs.DC/watch/").status_code == 302
    assert client.post("/accounts/settings/", {"daily_digest": "on"}).status_code == 302
    change = {"old_password": PASSWORD, "new_password1": NEW_PASSWORD}
    change |= {"new_password2": NEW_PASSWORD}
    assert client.post("/accounts/password_change/", change).status_code == 302


@FUZZ
@given(q=hostile, page=pages, order=hostile, status=hostile)
def test_admin_changelist_parameters(client, curator, term, q, page, order, status):
    client.force_login(curator)
    params = {"q": q, "p": page, "o": order}
    get_changes_nothing(client, "/admin/market/term/", params | {"status__exact": status})
    get_changes_nothing(client, "/admin/papers/paper/", params | {"hidden__exact": status})
    get_changes_nothing(client, "/admin/auth/user/", params)


# JSON boxes get any hostile text but a number of 4,300+ digits, which Python's json refuses
# with a ValueError that Django's forms.JSONField does not catch (a staff-only 500, in Django).
# Any JSON at all, as a curator might type into a JSON box by mistake, including "\u0000".
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | unicode_text | st.just("a\x00b"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner, max_size=3),
    max_leaves=6,
)


@pytest.fixture
def staff_client(curator) -> Client:
    client = Client()
    client.force_login(curator)
    return client


@pytest.fixture
def admin_form(staff_client) -> Callable[[str, str], dict[str, str]]:
    """An admin form as its page fills it, read once per test (admin pages are slow)."""
    forms: dict[str, dict[str, str]] = {}

    def read(url: str, form_id: str) -> dict[str, str]:
        if url not in forms:
            forms[url] = Page.of(staff_client.get(url)).form(form_id)
        return dict(forms[url])

    return read


json_hostile = st.one_of(
    hostile,  # "9" * 5000 among them: more digits than Python converts
    json_values.map(json.dumps),
    st.just('["\\u0000"]'),
)


@FUZZ
@given(
    phrase=mostly(usernames),
    aliases=mostly(st.lists(unicode_text, max_size=3).map(json.dumps), json_hostile),
    description=mostly(unicode_text),
    p0=mostly(st.integers(1, 10**9).map(str)),
    k=mostly(st.integers(0, 10**9).map(str)),
    status=mostly(st.sampled_from(["listed", "halted", "delisted"])),
)
def test_admin_term_form(staff_client, admin_form, phrase, aliases, description, p0, k, status):
    data = admin_form("/admin/market/term/add/", "term_form")
    data |= {"phrase": phrase, "aliases": aliases, "description": description}
    data |= {"p0": p0, "k": k, "status": status, "status_reason": description}
    before = site_state()
    response = staff_client.post("/admin/market/term/add/", data)
    assert_served(response)
    if is_refusal(response):
        assert site_state() == before


@FUZZ
@given(
    title=mostly(unicode_text),
    authors=mostly(
        st.lists(st.fixed_dictionaries({"name": unicode_text}), max_size=3).map(json.dumps),
        json_hostile,
    ),
    categories=mostly(st.lists(unicode_text, max_size=3).map(json.dumps), json_hostile),
    comment=mostly(unicode_text),
    license_url=mostly(st.sampled_from(["", "https://creativecommons.org/licenses/by/4.0/"])),
)
def test_admin_paper_form(
    staff_client, admin_form, listed, title, authors, categories, comment, license_url
):
    paper = Paper.objects.earliest("pk")
    url = f"/admin/papers/paper/{paper.pk}/change/"
    data = admin_form(url, "paper_form")
    data |= {"title": title, "authors": authors, "categories": categories, "comment": comment}
    data["license"] = license_url
    before = list(Paper.objects.order_by("pk").values())
    response = staff_client.post(url, data)
    assert_served(response)
    if is_refusal(response):
        assert list(Paper.objects.order_by("pk").values()) == before
    else:
        # Whatever the curator saved, readers' pages still show.
        for page in (f"/abs/{paper.arxiv_id}/", "/list/cs.DC/", "/list/cs.DC/feed/"):
            assert Client().get(page).status_code == 200, page
