"""Highlighted words in typeset abstracts: links to the market, never inside math or links."""

from __future__ import annotations

import datetime as dt

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.test.utils import CaptureQueriesContext

from market.highlighted_html import PageTerms
from market.models import Term
from market.templatetags.market import highlight
from papers.typesetting import tex_to_html
from peerrevenue import keep
from tests.factories import buy, list_paper, make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


def links(markup: str) -> list[tuple[str, str]]:
    """(href, text) of every highlighted term."""
    return [(a.attrs["href"], a.text) for a in Page.parse(markup).select("a", cls="term", href=...)]


@pytest.fixture
def terms(db):
    return {
        phrase: Term.objects.create(phrase=phrase, aliases=aliases)
        for phrase, aliases in [
            ("KV cache", ["key-value cache"]),
            ("consensus", []),
            ("key-value store", []),
            ("value store", []),
            ("GPU", []),
            ("policy", []),
        ]
    }


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("We shrink the KV cache.", [("/market/kv-cache/", "KV cache")]),
        ("We shrink the kv Cache.", [("/market/kv-cache/", "kv Cache")]),
        ("Eight GPUs suffice.", [("/market/gpu/", "GPUs")]),
        ("Two policies differ.", [("/market/policy/", "policies")]),
        ("A key-value cache helps.", [("/market/kv-cache/", "key-value cache")]),
        ("A key value store.", [("/market/key-value-store/", "key value store")]),
        ("A key-value store.", [("/market/key-value-store/", "key-value store")]),
        ("The value store.", [("/market/value-store/", "value store")]),
        ("Consensuses are not consensual.", [("/market/consensus/", "Consensuses")]),
        ("A GPUless design.", []),
    ],
)
def test_rules(terms, source, expected):
    assert links(highlight(tex_to_html(source))) == expected


def test_never_inside_math(terms):
    markup = highlight(tex_to_html("GPU time is $\\mathrm{GPU} \\cdot t$ on a GPU."))
    assert [text for _, text in links(markup)] == ["GPU", "GPU"]
    math = Page.parse(markup).first("math")
    assert not math.select("a") and not math.select(cls="term")


def test_never_inside_links(terms):
    source = "See \\href{https://example.org}{consensus notes} on consensus."
    markup = highlight(tex_to_html(source))
    assert [text for _, text in links(markup)] == ["consensus"]
    link = Page.parse(markup).one("a", href="https://example.org")
    assert set(link.attrs) <= {"href", "rel"}  # a plain link still, not made a term's


def test_text_stays_escaped(terms):
    markup = highlight(tex_to_html("If a < b & the KV cache > c"))
    assert "&lt; b &amp; the" in markup
    assert "&gt; c" in markup
    assert links(markup) == [("/market/kv-cache/", "KV cache")]


def test_halted_terms_are_not_highlighted(terms):
    Term.objects.filter(phrase="GPU").halt(reason="Under review")
    assert links(highlight(tex_to_html("One GPU."))) == []


def test_hover_shows_price_not_inline_text(terms, rf):
    # Highlighted text keeps a hole for the price; the response fills it for the reader.
    request = rf.get("/")
    request.user = AnonymousUser()
    markup = keep.Fill(request).encoded(highlight(tex_to_html("The KV cache."))).decode()
    page = Page.parse(markup)
    assert page.select(title="KV cache: 1.00 credits a share, +0.0% today")
    assert "credit" not in page.text


def test_category_page_links_terms_in_abstracts(client, cs_dc, terms):
    list_paper(
        make_paper(title="A KV cache in the title", abstract="Consensus on 8 GPUs."),
        category=cs_dc,
        date=dt.date(2026, 10, 2),
    )
    html = client.get("/list/cs.DC/").content.decode()
    found = links(html)
    assert ("/market/consensus/", "Consensus") in found
    assert ("/market/gpu/", "GPUs") in found
    # The title is itself a link to the paper, so it carries no term links.
    assert ("/market/kv-cache/", "KV cache") not in found


def test_a_thousand_terms_compile_once_and_a_page_reads_prices_once(
    terms, django_assert_max_num_queries
):
    Term.objects.bulk_create(Term(phrase=f"term{n}", slug=f"term{n}") for n in range(1000))
    highlight(tex_to_html("warm the matcher and the prices of GPUs"))
    with django_assert_max_num_queries(1):  # is the price table still current?
        page = PageTerms()
        for n in range(50):
            page.highlight(tex_to_html(f"term999 and term{n} on a GPU with consensus"))


# What a signed-in reader sees on the next render -------------------------------------------


def term_links(client, url: str) -> dict[str, str]:
    """Every highlighted term of a page as {text: hover title}, read like a browser would."""
    response = client.get(url)
    assert response.status_code == 200
    return {a.text: a.get("title") or "" for a in Page.of(response).select("a", cls="term")}


@pytest.fixture
def paper(cs_dc, terms):
    paper = make_paper(title="Raft everywhere", abstract="A KV cache for Raft consensus on GPUs.")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 10, 2))
    return paper


@pytest.fixture
def signed_in(client, trader):
    client.force_login(trader)
    return client


PAGES = ["/list/cs.DC/", "/abs/{arxiv_id}/"]


@pytest.mark.parametrize("page", PAGES)
def test_term_changes_show_on_the_next_signed_in_render(signed_in, paper, page):
    url = page.format(arxiv_id=paper.arxiv_id)
    assert {"KV cache", "consensus", "GPUs"} <= term_links(signed_in, url).keys()
    gpu = Term.objects.filter(phrase="GPU")
    gpu.halt(reason="Under review")
    assert "GPUs" not in term_links(signed_in, url)
    gpu.relist()
    assert "GPUs" in term_links(signed_in, url)
    gpu.delist(reason="Gone")
    assert "GPUs" not in term_links(signed_in, url)
    raft = Term.objects.create(phrase="Raft")  # listed
    assert {"Raft", "consensus"} <= term_links(signed_in, url).keys()
    raft.aliases = ["Raft consensus"]  # edited: the longer alias now wins
    raft.save()
    found = term_links(signed_in, url)
    assert "Raft consensus" in found and "consensus" not in found
    raft.delete()
    assert "Raft" not in term_links(signed_in, url)


@pytest.mark.parametrize("page", PAGES)
def test_a_trade_shows_its_new_price_on_the_next_signed_in_render(signed_in, trader, paper, page):
    url = page.format(arxiv_id=paper.arxiv_id)
    assert term_links(signed_in, url)["GPUs"].startswith("GPU: 1.00 credits a share")
    buy(trader, Term.objects.get(phrase="GPU"), 10)
    # p0 + 10 k = 1 + 10 × 0.01 credits
    assert term_links(signed_in, url)["GPUs"].startswith("GPU: 1.10 credits a share")


def test_an_edited_paper_shows_at_once(signed_in, paper):
    for page in PAGES:
        assert "GPUs" in term_links(signed_in, page.format(arxiv_id=paper.arxiv_id))
    paper.abstract_html = tex_to_html("Now about a value store.")
    paper.save()
    for page in PAGES:
        assert set(term_links(signed_in, page.format(arxiv_id=paper.arxiv_id))) == {"value store"}


def test_a_hidden_paper_goes_at_once(signed_in, paper):
    assert "Raft everywhere" in page_text(signed_in.get("/list/cs.DC/"))
    paper.hidden = True
    paper.save()
    assert "Raft everywhere" not in page_text(signed_in.get("/list/cs.DC/"))
    assert signed_in.get(f"/abs/{paper.arxiv_id}/").status_code == 404


def test_another_workers_term_change_shows_here_too(signed_in, paper):
    assert "GPUs" in term_links(signed_in, "/list/cs.DC/")  # this process now holds it all
    # Another worker halts the term with a plain update: the database moves the term-set
    # stamp, which this process reads with the next request's facts.
    Term.objects.filter(phrase="GPU").update(status=Term.Status.HALTED)
    assert "GPUs" not in term_links(signed_in, "/list/cs.DC/")


@pytest.mark.parametrize("page", PAGES)
def test_a_signed_in_render_asks_the_database_nothing_of_the_market(signed_in, paper, page):
    url = page.format(arxiv_id=paper.arxiv_id)
    term_links(signed_in, url)  # the first render matches and reads the price table
    with CaptureQueriesContext(connection) as queries:
        assert term_links(signed_in, url)
    # Whether the term set and prices are current is the one read of the page's facts, which
    # also reads the session (and asks whether the reader has notices: not market figures).
    market = [q["sql"] for q in queries.captured_queries if "market_" in q["sql"]]
    assert len(market) == 1 and "kept_stamp" in market[0] and "accounts_session" in market[0]


def test_a_renamed_category_shows_at_once_in_kept_paper_items(signed_in, paper, cs_dc):
    assert "Distributed Computing" in page_text(signed_in.get("/list/cs.DC/"))
    cs_dc.name = "Distributed Systems"
    cs_dc.save()
    page = Page.of(signed_in.get("/list/cs.DC/"))
    assert "Distributed Systems" in page.texts("p", cls="paper__label")


def test_a_hostile_abstract_gets_a_bounded_number_of_links(terms, cs_dc, client, monkeypatch):
    from market import highlighted_html

    reversed_urls: list[str] = []
    real_reverse = highlighted_html.reverse

    def counting_reverse(*args, **kwargs):
        reversed_urls.append(args[0])
        return real_reverse(*args, **kwargs)

    monkeypatch.setattr(highlighted_html, "reverse", counting_reverse)
    # 30,000 mentions in 330 kB: every one a link would make a page of megabytes.
    hostile = make_paper(abstract="GPU consensus policy " * 10_000 + "Then a KV cache.")
    normal = make_paper(abstract="A KV cache for consensus on a GPU.")
    list_paper(hostile, category=cs_dc, date=dt.date(2026, 11, 25))
    list_paper(normal, category=cs_dc, date=dt.date(2026, 11, 25))
    page = client.get("/list/cs.DC/").content.decode()
    found = links(page)
    # The hostile's first 200, the neighbour's 3.
    assert len(found) == highlighted_html.MAX_LINKS + 3
    assert ("/market/kv-cache/", "KV cache") in found  # the neighbour's
    assert sum(text == "KV cache" for _, text in found) == 1  # not the hostile's, past the bound
    # Each term's address is worked out once a text, not once a mention.
    assert len(reversed_urls) <= 2 * len(terms)
    assert len(page) < len(hostile.abstract_html) + 100_000
