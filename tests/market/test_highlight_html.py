"""Highlighted words in typeset abstracts: links to the market, never inside math or links."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from market.models import Term
from market.templatetags.market import highlight
from papers.typesetting import tex_to_html
from tests.factories import list_paper, make_paper

pytestmark = pytest.mark.django_db


def links(markup: str) -> list[tuple[str, str]]:
    """(href, text) of every highlighted term."""
    return re.findall(r'<a class="term" href="([^"]+)"[^>]*>([^<]*)</a>', markup)


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
    math = re.search(r"<math.*?</math>", markup, flags=re.S).group()
    assert "term" not in math


def test_never_inside_links(terms):
    source = "See \\href{https://example.org}{consensus notes} on consensus."
    markup = highlight(tex_to_html(source))
    assert [text for _, text in links(markup)] == ["consensus"]
    assert '<a href="https://example.org"' in markup.replace(' rel="nofollow noopener"', "")


def test_text_stays_escaped(terms):
    markup = highlight(tex_to_html("If a < b & the KV cache > c"))
    assert "&lt; b &amp; the" in markup
    assert "&gt; c" in markup
    assert links(markup) == [("/market/kv-cache/", "KV cache")]


def test_halted_terms_are_not_highlighted(terms):
    Term.objects.filter(phrase="GPU").halt(reason="Under review")
    assert links(highlight(tex_to_html("One GPU."))) == []


def test_hover_shows_price_not_inline_text(terms):
    markup = highlight(tex_to_html("The KV cache."))
    assert re.search(r'title="KV cache: 1\.00 credits a share, \+0\.0% today"', markup)
    text = re.sub(r"<[^>]+>", "", markup)
    assert "credit" not in text


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


def test_a_thousand_terms_compile_once(terms, django_assert_max_num_queries):
    Term.objects.bulk_create(Term(phrase=f"term{n}", slug=f"term{n}") for n in range(1000))
    from market.highlighting import terms_changed

    terms_changed()
    highlight(tex_to_html("warm the matcher"))
    with django_assert_max_num_queries(1):
        for _ in range(50):
            highlight(tex_to_html("term999 and term1 on a GPU with consensus"))
