"""Links to a paper's code named in its arXiv comments or abstract: shown on its page and marked
in lists, and hostile addresses never become links."""

from __future__ import annotations

import datetime as dt

import pytest

from papers.code_links import MAX_LINKS, found_in
from tests.factories import list_paper, make_paper
from tests.html import Page


def urls(text: str) -> list[str]:
    return [link.url for link in found_in(text)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Code: https://github.com/ada/raft.", ["https://github.com/ada/raft"]),
        ("code at github.com/ada/raft-kv, data on", ["https://github.com/ada/raft-kv"]),
        ("(see https://gitlab.com/a/b)", ["https://gitlab.com/a/b"]),
        (r"\url{https://huggingface.co/datasets/a/b}", ["https://huggingface.co/datasets/a/b"]),
        (r"\href{https://codeberg.org/a/b}{here}", ["https://codeberg.org/a/b"]),
        ("https://zenodo.org/records/123?preview=1#files", ["https://zenodo.org/records/123"]),
        ("http://www.bitbucket.org/a/b/", ["https://bitbucket.org/a/b"]),
        (
            "https://ada.github.io/project/ and gist.github.com/x",
            [
                "https://ada.github.io/project",
                "https://gist.github.com/x",
            ],
        ),
        (
            "https://GitHub.com/Ada/Raft and https://github.com/ada/raft",
            ["https://github.com/Ada/Raft"],
        ),
        # No scheme and the host in capitals: no "http" to find, the host found all the same.
        ("Our code: GITHUB.COM/ada/raft.", ["https://github.com/ada/raft"]),
        ("HTTPS://GitLab.com/a/b", ["https://gitlab.com/a/b"]),
    ],
)
def test_addresses_on_code_hosts_are_found(text, expected):
    assert urls(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com.example.org/a/b",
        "https://evil-github.com/a/b",
        "evil-github.com/a/b",
        "https://github.com@example.org/a/b",
        "https://user:pw@github.com/a/b",
        "https://github.com:8443/a/b",
        "https://gіthub.com/a/b",  # a Cyrillic і
        "https://github.com",
        "https://github.com/",
        "https://example.org/github.com/a",
        "https://en.wikipedia.org/wiki/Raft_(algorithm)",
        "ftp://github.com/a/b",
    ],
)
def test_lookalikes_and_other_hosts_are_not_code_links(text):
    assert urls(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "javascript:alert(1)//github.com/a/b",
        "data:text/html,https://github.com/a/b",
        'https://github.com/a/b"onmouseover="alert(1)',
        "https://github.com/a/b<script>alert(1)</script>",
    ],
)
def test_a_hostile_address_becomes_a_plain_https_link_or_none(text):
    for url in urls(text):
        assert url == "https://github.com/a/b"


def test_at_most_a_few_links_each_once():
    text = " ".join(f"https://github.com/a/{n} https://github.com/a/{n}" for n in range(9))
    assert urls(text) == [f"https://github.com/a/{n}" for n in range(MAX_LINKS)]


def test_only_the_start_of_a_huge_abstract_is_read():
    assert urls("x " * 20_000 + "https://github.com/a/b") == []


@pytest.mark.django_db
def test_the_paper_page_links_its_code_and_a_list_marks_it(client, cs_dc):
    paper = make_paper(
        title="Raft, faster",
        abstract="We make Raft faster. Our code: https://github.com/ada/fast-raft.",
    )
    paper.comment = (
        "12 pages; data at https://zenodo.org/records/42, lookalike https://github.com.evil.org/x/y"
    )
    paper.save()
    plain = make_paper(title="No code here", abstract="Only words.")
    for each in (paper, plain):
        list_paper(each, category=cs_dc, date=dt.date(2026, 11, 27))

    page = Page.of(client.get(paper.get_absolute_url()))
    (code,) = [a for a in page.select("a") if a.text == "Code"]
    assert code.get("href") == "https://zenodo.org/records/42"  # the comments come first
    assert code.get("rel") == "nofollow noopener"
    listed = page.one("ul", cls="code-links")
    assert listed.links() == [
        ("https://zenodo.org/records/42", "zenodo.org/records/42"),
        ("https://github.com/ada/fast-raft", "github.com/ada/fast-raft"),
    ]
    assert "evil" not in " ".join(href for href, _ in page.links())
    assert not [
        a for a in Page.of(client.get(plain.get_absolute_url())).select("a") if a.text == "Code"
    ]

    listing = Page.of(client.get("/list/cs.DC/"))
    marked = listing.one("li", id=paper.arxiv_id).one("p", cls="paper__ids").select("a")[-1]
    assert (marked.text, marked.get("href")) == ("code", "https://zenodo.org/records/42")
    assert marked.get("rel") == "nofollow noopener"
    assert "code" not in listing.one("li", id=plain.arxiv_id).texts("a")


@pytest.mark.django_db
def test_an_edited_comment_changes_the_kept_pages(client, cs_dc):
    paper = make_paper(title="Later code", abstract="Words.")
    list_paper(paper, category=cs_dc, date=dt.date(2026, 11, 27))
    assert "Code and data" not in Page.of(client.get(paper.get_absolute_url())).text
    paper.comment = "Code: https://github.com/ada/later"
    paper.save()
    assert (
        "Code and data github.com/ada/later" in Page.of(client.get(paper.get_absolute_url())).text
    )
    assert "code" in Page.of(client.get("/list/cs.DC/")).one("li", id=paper.arxiv_id).texts("a")
