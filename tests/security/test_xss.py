"""Hostile text stays text: scripts, event handlers, ``javascript:`` links, MathML tricks,
``</textarea>`` and template syntax, stored through the real write paths (a feed ingest, terms,
sign-ups, trades, balance adjustments), render inert on every page that shows them: the reader
pages, the market pages, the admin and the Atom feed.

"Inert" is judged by an HTML parser (``tests.security.helpers``): no ``<script>`` element other
than the site's own ``<script src="/static/…">``, no ``on*`` attribute, no ``javascript:`` (or
``data:text/html``) in ``href``/``src``/``xlink:href``, no ``<iframe>``/``<maction>``. Each page
must also *show* the hostile text (``alert(`` in what a reader sees), so the test cannot pass by
looking at a page that does not contain it.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Model
from django.test import Client
from django.urls import reverse

from market import trading
from market.models import Account, Mention, Term
from papers.ingest import ingest_feed, parse_feed
from papers.models import Category, Paper, Watch
from tests.factories import buy
from tests.html import Page
from tests.market.state import held_before_the_announcement
from tests.security.helpers import active_content, inspect_html

pytestmark = [
    pytest.mark.django_db,
    # Long hostile URLs make page-cache keys memcached would refuse; the site uses Redis.
    pytest.mark.filterwarnings("ignore::django.core.cache.backends.base.CacheKeyWarning"),
    # The paper admin's licence URLField, about Django 6's default scheme: not ours to test.
    pytest.mark.filterwarnings("ignore:The default scheme will be changed"),
]

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
ATTRIBUTE = '" onmouseover="alert(1)'
TEXTAREA = "</textarea><script>alert(1)</script>"
# Django templates never compile stored text; if one did, this would print the hash.
TEMPLATE = "{{ user.password }}{% debug %}"
MATHML = (
    '<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">m</maction></math>'
)
SVG = '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>'
HOSTILE = f"{SCRIPT} {IMG} {ATTRIBUTE} {TEXTAREA} {TEMPLATE} {MATHML} {SVG}"

# TeX that turns into links and formulas: every one must come out without a javascript: URL.
TEX_TRICKS = (
    r"\href{javascript:alert(1)}{click} \href{JaVaScRiPt:alert(1)}{click}"
    r" \href{ javascript:alert(1)}{click} \href{java&#x09;script:alert(1)}{click}"
    r" \url{javascript:alert(1)} \url{data:text/html,<script>alert(1)</script>}"
    r" $\href{javascript:alert(1)}{x}$ $\text{<script>alert(1)</script>}$"
    r" $<img src=x onerror=alert(1)>$ $\mathrm{\"><svg onload=alert(1)>}$"
    r" \emph{<b onclick=alert(1)>bold</b>}"
)

MARKDOWN = f"""Hostile **description** {SCRIPT} {IMG}

[click](javascript:alert(1)) [click](JaVaScRiPt:alert(1)) [click](  javascript:alert(1))
[click](jav&#x09;ascript:alert(1)) [reference][evil] <javascript:alert(1)>
![image](javascript:alert(1)) ![image](x" onerror="alert(1))
[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)

<a href="javascript:alert(1)">raw link</a> <svg onload=alert(1)></svg>
<iframe src="javascript:alert(1)"></iframe>
<form action="javascript:alert(1)"><button>go</button></form>
{MATHML}

```
{SCRIPT}
```

</textarea>{TEMPLATE}

[evil]: javascript:alert(1)
"""

DATE = dt.date(2026, 11, 24)
RSS_ID = "2611.66601"
API_ID = "2611.66602"


def rss_feed() -> bytes:
    """An arXiv RSS feed whose every field an attacker could have written."""
    title = f"Consensus under attack {SCRIPT} {IMG} {ATTRIBUTE} {TEXTAREA} {TEMPLATE}"
    abstract = f"We study consensus. {HOSTILE} {TEX_TRICKS}"
    creators = (
        f"Mallory {SCRIPT}, Eve {IMG.replace('(1)', '')} (Evil {ATTRIBUTE} Institute),"
        rf" Trent \href{{javascript:alert(1)}}{{x}}, Oscar {TEXTAREA} and Peggy {TEMPLATE}"
    )
    return f"""<?xml version='1.0' encoding='UTF-8'?>
<rss xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:atom="http://www.w3.org/2005/Atom" version="2.0">
  <channel>
    <title>cs.DC updates on arXiv.org</title>
    <link>http://rss.arxiv.org/rss/cs.DC</link>
    <description>cs.DC updates on the arXiv.org e-print archive.</description>
    <pubDate>Tue, 24 Nov 2026 00:00:00 -0500</pubDate>
    <item>
      <title>{escape(title)}</title>
      <link>https://arxiv.org/abs/{RSS_ID}</link>
      <description>arXiv:{RSS_ID}v1 Announce Type: new
Abstract: {escape(abstract)}</description>
      <guid isPermaLink="false">oai:arXiv.org:{RSS_ID}v1</guid>
      <category>cs.DC</category>
      <pubDate>Tue, 24 Nov 2026 00:00:00 -0500</pubDate>
      <arxiv:announce_type>new</arxiv:announce_type>
      <dc:rights>javascript:alert(1)</dc:rights>
      <dc:creator>{escape(creators)}</dc:creator>
      <arxiv:journal_reference>{escape(f"J. Evil {SCRIPT} {ATTRIBUTE}")}</arxiv:journal_reference>
      <arxiv:DOI>{escape('10.1/x"><script>alert(1)</script>')}</arxiv:DOI>
    </item>
  </channel>
</rss>""".encode()


def api_feed() -> bytes:
    """An arXiv API response: the source of comments and affiliations."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:arxiv="http://arxiv.org/schemas/atom">
  <title>ArXiv Query</title>
  <id>http://arxiv.org/api/x</id>
  <updated>2026-11-24T00:00:00-05:00</updated>
  <entry>
    <id>http://arxiv.org/abs/{API_ID}v1</id>
    <updated>2026-11-23T16:02:11Z</updated>
    <published>2026-11-23T16:02:11Z</published>
    <title>{escape(f"Consensus again {IMG}")}</title>
    <summary>{escape(f"Consensus, once more. {SCRIPT} {TEX_TRICKS}")}</summary>
    <author>
      <name>{escape(f"Ivan {SCRIPT}")}</name>
      <arxiv:affiliation>{escape(f"{IMG} {ATTRIBUTE} University")}</arxiv:affiliation>
    </author>
    <arxiv:comment>{escape(f"14 pages {SCRIPT} {TEXTAREA} {TEMPLATE}")}</arxiv:comment>
    <arxiv:journal_ref>{escape(f"Proc. {IMG}")}</arxiv:journal_ref>
    <arxiv:primary_category term="cs.DC"/>
    <category term="cs.DC"/>
  </entry>
</feed>""".encode()


@pytest.mark.parametrize(
    "markup",
    [
        "<script>alert(1)</script>",
        '<script src="https://evil.example/x.js"></script>',
        '<script src="/static/js/quote.js">alert(1)</script>',
        "<img src=x onerror=alert(1)>",
        '<p title="x" ONMOUSEOVER="alert(1)">x</p>',
        '<a href=" java\tscript:alert(1)">x</a>',
        '<a href="JaVaScRiPt:alert(1)">x</a>',
        '<svg><a xlink:href="javascript:alert(1)">x</a></svg>',
        '<math><maction actiontype="statusline">x</maction></math>',
        '<iframe src="/"></iframe>',
        '<form action="javascript:alert(1)"></form>',
        '<a href="data:text/html;base64,PHNjcmlwdD4=">x</a>',
    ],
)
def test_the_inspector_catches_active_content(markup):
    """The checker these tests rely on is not blind."""
    assert active_content(f"<p>before</p>{markup}<p>after</p>") != []


def test_the_inspector_lets_inert_markup_and_the_sites_scripts_through():
    inert = (
        '<script src="/static/js/quote.js" defer></script>'
        '<p title="&quot; onmouseover=&quot;alert(1)">&lt;script&gt;alert(1)&lt;/script&gt;</p>'
        '<a href="https://arxiv.org/abs/2611.00001">javascript:alert(1)</a>'
        "<math><mi>x</mi></math>"
    )
    assert active_content(inert) == []


@pytest.fixture
def hostile_users(django_user_model, password) -> list[AbstractBaseUser]:
    return [
        django_user_model.objects.create_user(name, f"user{i}@example.org", password)
        for i, name in enumerate([SCRIPT, IMG, ATTRIBUTE, TEXTAREA, TEMPLATE])
    ]


@pytest.fixture
def hostile_terms(db) -> list[Term]:
    """Listed before the ingest, so the hostile papers count as their mentions."""
    return [
        Term.objects.create(
            phrase=f"{IMG} consensus",
            aliases=["consensus", SCRIPT],
            description=MARKDOWN,
        ),
        Term.objects.create(phrase=ATTRIBUTE, aliases=[TEXTAREA], description=f"{TEMPLATE}"),
        Term.objects.create(
            phrase=f"{TEXTAREA} halted",
            description=MARKDOWN,
            status=Term.Status.HALTED,
            status_reason=f"{SCRIPT} {ATTRIBUTE}",
        ),
    ]


@pytest.fixture
def hostile_site(
    cs_dc: Category, hostile_users, hostile_terms, django_capture_on_commit_callbacks
) -> dict[str, object]:
    listed = hostile_terms[:2]
    for user in hostile_users:
        for term in listed:
            buy(user, term, 2)
        Watch.objects.create(user=user, category=cs_dc)
        trading.adjust_balance(
            account=Account.objects.get(user=user), amount=1_000, reason=f"Refund {SCRIPT} {IMG}"
        )
    # Dividends pay the shares held at arXiv's announcement of the day, from the term's
    # listing on: date the listings and trades before it, so the hostile day pays them.
    held_before_the_announcement(DATE)
    # After each ingest commits, the day's mentions are recorded and dividends paid.
    with django_capture_on_commit_callbacks(execute=True):
        ingest_feed(category=cs_dc, parsed=parse_feed(rss_feed()), source="test")
        ingest_feed(category=cs_dc, parsed=parse_feed(api_feed(), date=DATE), source="test")
    assert Paper.objects.filter(arxiv_id__in=[RSS_ID, API_ID]).count() == 2
    assert Mention.objects.filter(term=hostile_terms[0]).count() == 2
    return {"users": hostile_users, "terms": hostile_terms}


def assert_inert(response, *, shows: str = "alert(") -> str:
    """The page renders, runs nothing, and shows the hostile text ``shows`` as text a reader
    can see (so the page checked really did receive it)."""
    assert response.status_code == 200, response.status_code
    markup = response.content.decode()
    report = inspect_html(markup)
    assert report.problems == []
    assert shows in report.text
    return markup


def user_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


# Reader and market pages -----------------------------------------------------------------------


def public_pages(site: dict) -> list[str]:
    terms: list[Term] = site["terms"]
    pages = [
        "/list/cs.DC/",
        f"/list/cs.DC/{DATE:%Y-%m-%d}/",
        f"/abs/{RSS_ID}/",
        f"/abs/{API_ID}/",
        "/market/",
        "/market/?q=consensus",
        "/leaderboard/",
    ]
    for term in terms:
        pages.append(term.get_absolute_url())
        if term.is_tradable:
            pages.append(reverse("market:quote", args=[term.slug]) + "?side=buy&shares=1")
    return pages


def test_reader_and_market_pages_show_hostile_text_as_text(client, hostile_site):
    for url in public_pages(hostile_site):
        assert_inert(client.get(url))


def test_signed_in_pages_show_hostile_text_as_text(hostile_site):
    for user in hostile_site["users"]:
        client = user_client(user)
        pages = [*public_pages(hostile_site), "/watching/", "/portfolio/", "/accounts/settings/"]
        for url in pages:
            # The navigation shows the hostile username on every page.
            markup = assert_inert(client.get(url), shows=user.get_username())
            # Stored text is never compiled as a template: nothing reveals the password hash.
            assert user.password not in markup


def test_portfolio_shows_hostile_dividends_and_memos_as_text(hostile_site):
    user = hostile_site["users"][0]
    markup = assert_inert(user_client(user).get("/portfolio/"))
    text = " ".join(inspect_html(markup).text.split())
    assert f"Dividend on {IMG} consensus" in text
    assert f"Refund {SCRIPT} {IMG}" in text


def test_the_hostile_papers_read_as_their_authors_wrote_them(client, hostile_site):
    """Not only inert: the text is all there, escaped, rather than silently dropped."""
    text = inspect_html(client.get(f"/abs/{RSS_ID}/").content.decode()).text
    assert SCRIPT in text and IMG in text and TEXTAREA in text
    assert "J. Evil <script>alert(1)</script>" in text  # the journal reference
    api_text = inspect_html(client.get(f"/abs/{API_ID}/").content.decode()).text
    assert f"14 pages {SCRIPT} {TEXTAREA} {TEMPLATE}" in api_text  # the comment, verbatim
    assert f"{IMG} {ATTRIBUTE} University" in api_text  # the affiliation


def test_term_descriptions_keep_their_text_but_lose_every_script(client, hostile_site):
    term = hostile_site["terms"][0]
    markup = assert_inert(client.get(term.get_absolute_url()))
    text = inspect_html(markup).text
    assert "Hostile description" in " ".join(text.split())
    assert TEMPLATE in text  # shown literally, never evaluated
    # The links that survive in the description go to the web or to mail, nowhere else.
    description = Page.parse(markup).one("section", cls="term-description")
    hrefs = [element.attrs["href"] for element in description.select(href=...)]
    assert all(href.startswith(("http://", "https://", "mailto:")) for href in hrefs)
    # The recent mentions list the hostile papers by their (escaped) titles.
    assert "Consensus under attack <script>alert(1)</script>" in text


def test_highlighted_terms_carry_their_hostile_phrase_only_in_an_escaped_title(
    client, hostile_site
):
    markup = assert_inert(client.get(f"/abs/{RSS_ID}/"))
    report = inspect_html(markup)
    # The term was highlighted (its phrase is in a link's hover title) and the title is text.
    assert any(value.startswith(f"{IMG} consensus:") for value in report.attribute_values)


def test_reflected_input_is_escaped(client, trader, hostile_site):
    term = hostile_site["terms"][0]
    quote_url = reverse("market:quote", args=[term.slug])
    hostile = f"{SCRIPT}{ATTRIBUTE}{TEXTAREA}"
    for url, params in [
        ("/market/", {"q": hostile, "sort": hostile}),
        (quote_url, {"side": hostile, "shares": hostile}),
        (quote_url, {"side": "buy", "budget": hostile}),
        ("/accounts/login/", {"next": f"javascript:alert(1)//{hostile}"}),
    ]:
        response = client.get(url, params)
        assert response.status_code in (200, 400), (url, response.status_code)
        assert active_content(response.content.decode()) == [], url
    for url, data in [
        ("/accounts/signup/", {"username": hostile, "email": hostile, "password1": "x"}),
        ("/accounts/login/", {"username": hostile, "password": "x"}),
    ]:
        response = client.post(url, data)
        assert response.status_code == 200
        assert active_content(response.content.decode()) == [], url
    client.force_login(trader)
    response = client.post(
        reverse("market:trade", args=[term.slug]),
        {"side": hostile, "shares": hostile, "limit": hostile, "key": hostile},
    )
    assert response.status_code == 400
    assert active_content(response.content.decode()) == []


def test_not_found_pages_do_not_echo_markup(client, cs_dc):
    for url in [
        "/list/cs.DC/%3Cscript%3Ealert(1)%3C%2Fscript%3E/",
        "/list/%3Cimg%20src=x%20onerror=alert(1)%3E/",
        "/archive/%3Cscript%3Ealert(1)%3C%2Fscript%3E/",
        "/market/script-alert-1/",
    ]:
        response = client.get(url)
        assert response.status_code == 404
        assert active_content(response.content.decode()) == [], url


# The admin ---------------------------------------------------------------------------------


def admin_pages(site: dict) -> list[str]:
    pages = [reverse("admin:index")]
    for model in admin.site._registry:
        opts = model._meta
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist"))
    objects: list[Model] = [
        *site["terms"],
        *site["users"],
        *Paper.objects.filter(arxiv_id__in=[RSS_ID, API_ID]),
        *Account.objects.filter(user__in=site["users"]),
    ]
    for obj in objects:
        opts = obj._meta
        pages.append(reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk]))
    return pages


def test_admin_changelists_and_forms_show_hostile_text_as_text(client, curator, hostile_site):
    client.force_login(curator)
    shown = []
    for url in admin_pages(hostile_site):
        response = client.get(url)
        assert response.status_code == 200, url
        report = inspect_html(response.content.decode())
        assert report.problems == [], url
        shown.append("alert(" in report.text or any("alert(" in v for v in report.attribute_values))
    # Users, terms, papers, ledger and trades all list hostile text somewhere.
    assert sum(shown) >= 8


def test_admin_search_is_escaped(client, curator, hostile_site):
    client.force_login(curator)
    for model in (Paper, Term, get_user_model()):
        opts = model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        response = client.get(url, {"q": SCRIPT})
        assert response.status_code == 200
        assert active_content(response.content.decode()) == [], url


# The Atom feed -----------------------------------------------------------------------------

ATOM = "{http://www.w3.org/2005/Atom}"


def test_atom_feed_escapes_and_sanitises_hostile_papers(client, hostile_site):
    response = client.get("/list/cs.DC/feed/")
    assert response.status_code == 200
    root = ET.fromstring(response.content)  # well-formed: nothing broke out of its element
    entries = root.findall(f"{ATOM}entry")
    assert len(entries) == 2
    for entry in entries:
        title = entry.find(f"{ATOM}title")
        assert title is not None and title.get("type", "text") == "text"
        assert "alert(1)" in (title.text or "")  # plain text, which feed readers show as text
        for element in entry.iter():
            if element.get("type") == "html":
                decoded = element.text or ""
                assert "<script" not in decoded.lower()
                assert active_content(decoded) == []
        summary = entry.find(f"{ATOM}summary")
        assert summary is not None and "alert(1)" in inspect_html(summary.text or "").text
        for link in entry.iter(f"{ATOM}link"):
            assert link.get("href", "").startswith(("http://", "https://", "/"))


# The second wall ---------------------------------------------------------------------------


def script_sources(policy: str) -> list[str]:
    for directive in policy.split(";"):
        name, *sources = directive.split()
        if name == "script-src":
            return sources
    raise AssertionError(f"no script-src in {policy!r}")


def test_every_page_forbids_inline_script_even_from_the_page_cache(client, curator, hostile_site):
    """Should a sanitiser ever miss something, the browser still runs no inline script, no
    javascript: URL and no other site's script; and no page can be framed."""
    responses = []
    for url in public_pages(hostile_site):
        responses += [client.get(url), client.get(url)]  # the second is served from the cache
    responses.append(client.get("/list/cs.DC/feed/"))
    responses.append(user_client(curator).get("/admin/market/term/"))
    for response in responses:
        policy = response.headers["Content-Security-Policy"]
        assert script_sources(policy) == ["'self'"]
        assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy
        assert response.headers["X-Frame-Options"] == "DENY"
        assert response.headers["X-Content-Type-Options"] == "nosniff"
