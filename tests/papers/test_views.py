"""The reader pages: what a reader sees on category, paper and archive pages."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from papers.models import Category, Listing, Watch
from tests.factories import list_paper, make_listed_papers, make_paper
from tests.html import Page, page_text
from tests.papers.pages import paper_ids_in_order, queries_for

pytestmark = pytest.mark.django_db

FRIDAY = dt.date(2026, 10, 2)
THURSDAY = dt.date(2026, 10, 1)


def test_home_redirects_to_cs_dc(client):
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/list/cs.DC/"


def test_category_page_head(client, cs_dc):
    text = page_text(client.get("/list/cs.DC/"))
    assert "Peer Revenue" in text
    assert "Publish or profit" in text
    assert "Fresh from arXiv, typeset properly. Highlighted words trade on the market" in text
    assert "Computer Science › Distributed Computing" in text
    assert "cs.DC Watch" in text.replace("0 watchers", "")
    page = Page.of(client.get("/list/cs.DC/"))
    assert page.one("h1").text == "Distributed Computing"
    assert page.one("title").text == "Distributed Computing (cs.DC) · Peer Revenue"
    assert page.one("link", rel="alternate").get("title") == "cs.DC feed"


def test_day_headings_and_year_only_when_not_current(client, cs_dc):
    this_year = timezone.localdate().year
    recent = dt.date(this_year, 1, 2)
    old = dt.date(this_year - 1, 10, 2)
    list_paper(make_paper(title="Recent"), category=cs_dc, date=recent)
    list_paper(make_paper(title="Old"), category=cs_dc, date=old)
    text = page_text(client.get("/list/cs.DC/"))
    assert f"{recent:%A} 2 January" in text
    assert f"{recent:%A} 2 January {this_year}" not in text
    assert f"{old:%A} 2 October {this_year - 1}" in text
    assert text.index("Recent Ada") < text.index("Old Ada")


def test_cross_list_label_names_the_primary_category(client, cs_dc):
    list_paper(make_paper(title="Home grown"), category=cs_dc, date=FRIDAY)
    list_paper(
        make_paper(title="Visitor", primary="cs.LG"),
        category=cs_dc,
        date=FRIDAY,
        announce_type=Listing.AnnounceType.CROSS,
    )
    text = page_text(client.get("/list/cs.DC/"))
    assert "Distributed Computing Home grown" in text
    assert "Distributed Computing · Cross-listed from cs.LG Visitor" in text


@pytest.mark.parametrize(
    ("authors", "short"),
    [
        (["Ada Lovelace"], "Ada Lovelace"),
        (["Ada Lovelace", "Alan Turing"], "Ada Lovelace and Alan Turing"),
        (["A One", "B Two", "C Three"], "A One, B Two and C Three"),
        (["A One", "B Two", "C Three", "D Four"], "A One, B Two, C Three et al. (+1 more)"),
        ([f"Author {n}" for n in range(1, 8)], "Author 1, Author 2, Author 3 et al. (+4 more)"),
    ],
)
def test_author_forms(client, cs_dc, authors, short):
    list_paper(make_paper(authors=authors), category=cs_dc, date=FRIDAY)
    response = client.get("/list/cs.DC/")
    page = Page.of(response)
    byline = page.first("p", cls="paper__authors")
    assert byline.text == short
    assert len(byline.select("a")) == min(len(authors), 3)
    if len(authors) >= 4:
        assert f"All authors {', '.join(authors)}" in page_text(response)
        assert page.select("details", cls="paper__all-authors")
    else:
        assert "All authors" not in page_text(response)


def test_accented_author_names_are_rendered(client, cs_dc):
    list_paper(
        make_paper(authors=["Ay\\c{s}e Da\\u{g}l{\\i}", 'J\\"urgen M\\"uller']),
        category=cs_dc,
        date=FRIDAY,
    )
    assert "Ayşe Dağlı and Jürgen Müller" in page_text(client.get("/list/cs.DC/"))


def test_abstract_is_whole_in_the_html_with_a_no_script_control(client, cs_dc):
    abstract = " ".join(f"word{n}" for n in range(300))
    list_paper(make_paper(abstract=abstract), category=cs_dc, date=FRIDAY)
    response = client.get("/list/cs.DC/")
    page = Page.of(response)
    assert "word0" in page.text and "word299" in page.text
    assert page.one("details", cls="paper__more").first("summary").text == (
        "Read the full abstract"
    )


def test_ascending_arxiv_id_within_a_day_with_new_and_cross_interleaved(client, cs_dc):
    for arxiv_id, kind in [
        ("2610.00300", Listing.AnnounceType.NEW),
        ("2610.00100", Listing.AnnounceType.CROSS),
        ("2610.00200", Listing.AnnounceType.NEW),
    ]:
        primary = "cs.LG" if kind == Listing.AnnounceType.CROSS else "cs.DC"
        list_paper(
            make_paper(arxiv_id=arxiv_id, primary=primary),
            category=cs_dc,
            date=FRIDAY,
            announce_type=kind,
        )
    list_paper(make_paper(arxiv_id="2609.09999"), category=cs_dc, date=THURSDAY)
    assert paper_ids_in_order(client.get("/list/cs.DC/")) == [
        "2610.00100",
        "2610.00200",
        "2610.00300",
        "2609.09999",
    ]


def test_replacements_and_hidden_papers_are_not_in_the_stream(client, cs_dc):
    """Replacements have their own section after the day (see test_days.py), not the stream."""
    list_paper(make_paper(arxiv_id="2610.00001"), category=cs_dc, date=FRIDAY)
    list_paper(
        make_paper(arxiv_id="2610.00002"),
        category=cs_dc,
        date=FRIDAY,
        announce_type=Listing.AnnounceType.REPLACE,
    )
    list_paper(
        make_paper(arxiv_id="2610.00003", primary="cs.LG"),
        category=cs_dc,
        date=FRIDAY,
        announce_type=Listing.AnnounceType.REPLACE_CROSS,
    )
    list_paper(make_paper(arxiv_id="2610.00004", hidden=True), category=cs_dc, date=FRIDAY)
    response = client.get("/list/cs.DC/")
    assert paper_ids_in_order(response) == ["2610.00001"]
    assert "Replacements (2)" in page_text(response)
    assert "2610.00004" not in response.content.decode()
    assert client.get("/abs/2610.00004/").status_code == 404


def test_pagination_runs_across_days_and_repeats_the_heading(client, cs_dc):
    make_listed_papers(20, category=cs_dc, date=FRIDAY, first_number=1)
    make_listed_papers(20, category=cs_dc, date=THURSDAY, first_number=100)
    first = client.get("/list/cs.DC/")
    second = client.get("/list/cs.DC/?page=2")
    assert len(paper_ids_in_order(first)) == 30
    assert len(paper_ids_in_order(second)) == 10
    assert "Friday 2 October" in page_text(first) and "Thursday 1 October" in page_text(first)
    assert "Thursday 1 October" in page_text(second)
    assert "Friday 2 October" not in page_text(second)
    assert "Page 1 of 2" in page_text(first)
    assert 'href="?page=2"' in first.content.decode()


def test_dated_page_starts_at_that_date_and_goes_back(client, cs_dc):
    list_paper(make_paper(arxiv_id="2610.00001"), category=cs_dc, date=FRIDAY)
    list_paper(make_paper(arxiv_id="2609.00001"), category=cs_dc, date=THURSDAY)
    response = client.get("/list/cs.DC/2026-10-01/")
    assert paper_ids_in_order(response) == ["2609.00001"]


def test_empty_day_shows_an_empty_state(client, cs_dc):
    response = client.get("/list/cs.DC/2026-10-03/")
    assert response.status_code == 200
    assert "No papers on or before 3 October 2026" in page_text(response)


@pytest.mark.parametrize(
    "url",
    [
        "/list/cs.XX/",
        "/list/cs.XX/2026-10-02/",
        "/list/cs.DC/2026-13-01/",
        "/list/cs.DC/2026-02-30/",
        "/list/cs.DC/yesterday/",
        "/list/cs.DC/20261002/",
        "/list/cs.DC/?page=2",
        "/list/cs.DC/?page=99999999999999999999",
        "/abs/2610.99999/",
        "/abs/not-an-id/",
        "/abs/2610.99999v2/",
        "/archive/zz/",
        "/list/cs.XX/feed/",
    ],
)
def test_bad_urls_are_404s_in_the_site_style(client, cs_dc, url):
    list_paper(make_paper(arxiv_id="2610.00001"), category=cs_dc, date=FRIDAY)
    response = client.get(url)
    assert response.status_code == 404
    if not url.endswith("feed/"):
        assert "Peer Revenue" in page_text(response)
        assert "Not found" in page_text(response)


def test_category_page_query_count_is_fixed(client, cs_dc, reader):
    client.force_login(reader)

    def cold_and_warm() -> tuple[int, int]:
        """Queries of the first render after a change, then of the next one."""
        Category.objects.filter(pk=cs_dc.pk).update(name=cs_dc.name)  # moves its stamp
        return queries_for(client, "/list/cs.DC/"), queries_for(client, "/list/cs.DC/")

    make_listed_papers(3, category=cs_dc, date=FRIDAY, first_number=1)
    cold_and_warm()  # warm the per-process term matcher, built once and then cached
    few_cold, few_warm = cold_and_warm()
    make_listed_papers(40, category=cs_dc, date=THURSDAY, first_number=100)
    many_cold, many_warm = cold_and_warm()
    # One more for the query asking where the next page starts (a day's replacements show
    # where the day ends), one for the stars of entries not filled before (library's
    # "saved" holes: one query for the whole page) and one for their comment counts
    # (discussion's "comments" holes, the same way); never one per paper.
    assert many_cold == few_cold + 3
    # The page's facts with the session and user, category, count, page, the next page's
    # first day, replacements, three for the day navigation, the stars and the comment counts.
    assert many_cold <= 12
    # Then the page is kept until something it shows changes: the page's facts (the stamps it
    # is kept by, the watchers, the reader's watch), read with the session and its reader in
    # one statement (accounts.sessions), are all that is left to ask the database.
    assert many_warm == few_warm == 1


def test_watch_toggle(client, cs_dc, reader):
    client.force_login(reader)
    response = client.post("/list/cs.DC/watch/")
    assert response.status_code == 302
    assert Watch.objects.filter(user=reader, category=cs_dc).exists()
    text = page_text(client.get("/list/cs.DC/"))
    assert "Unwatch" in text and "1 watcher" in text
    client.post("/list/cs.DC/watch/")
    assert not Watch.objects.filter(user=reader, category=cs_dc).exists()
    assert "0 watchers" in page_text(client.get("/list/cs.DC/"))


def test_watch_sends_anonymous_readers_to_log_in(client, cs_dc):
    response = client.post("/list/cs.DC/watch/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/list/cs.DC/"
    assert not Watch.objects.exists()


def test_watch_needs_post_and_csrf(cs_dc, reader):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(reader)
    assert strict.get("/list/cs.DC/watch/").status_code == 405
    assert strict.post("/list/cs.DC/watch/").status_code == 403
    assert not Watch.objects.exists()


def test_versioned_paper_address_redirects_to_the_paper(client, cs_dc):
    make_paper(arxiv_id="2610.00001")
    response = client.get("/abs/2610.00001v2/")
    assert response.status_code == 302
    assert response["Location"] == "/abs/2610.00001/"


def test_paper_page(client, cs_dc):
    paper = make_paper(
        arxiv_id="2610.00042",
        title="Fast $O(n)$ gossip",
        authors=["Ada Lovelace", "Alan Turing"],
        primary="cs.DC",
        categories=["cs.DC", "cs.NI"],
    )
    paper.authors[0]["affiliation"] = "Analytical Engines, London, UK"
    paper.comment = "12 pages, 3 figures"
    paper.journal_ref = "PODC 2026"
    paper.doi = "10.1145/1234567.7654321"
    paper.save()
    list_paper(paper, category=cs_dc, date=FRIDAY)
    response = client.get("/abs/2610.00042/")
    html = response.content.decode()
    text = page_text(response)
    assert "<math" in html
    assert "Ada Lovelace (Analytical Engines, London, UK)" in text
    assert (
        '<strong title="Primary category">Distributed Computing (cs.DC)</strong>; '
        "Networking and Internet Architecture (cs.NI)" in html
    )
    assert "12 pages, 3 figures" in text and "PODC 2026" in text
    assert 'href="https://doi.org/10.1145/1234567.7654321"' in html
    assert 'href="https://arxiv.org/pdf/2610.00042"' in html
    assert "Friday 2 October 2026 in cs.DC: new (v1)" in text


def test_affiliations_are_plain_text_like_the_names(client, cs_dc):
    paper = make_paper(authors=["Christian Krattenthaler", 'Thomas M\\"uller'])
    paper.authors[0]["affiliation"] = 'Universit\\"at Wien'
    paper.authors[1]["affiliation"] = "Le\\'on University; Zielona G\\'ora"
    paper.save()
    authors = Page.of(client.get(paper.get_absolute_url())).one("ul", aria_label="Authors")
    assert authors.texts("li") == [
        "Christian Krattenthaler (Universität Wien)",
        "Thomas Müller (León University; Zielona Góra)",
    ]

    # A curator's edit of an affiliation shows typeset at once.
    paper.authors[0]["affiliation"] = 'Technische Universit\\"at Graz'
    paper.save()
    authors = Page.of(client.get(paper.get_absolute_url())).one("ul", aria_label="Authors")
    assert authors.texts("li")[0] == "Christian Krattenthaler (Technische Universität Graz)"


def test_archive_lists_categories_with_counts(client, cs_dc):
    make_listed_papers(3, category=cs_dc, date=FRIDAY)
    response = client.get("/archive/cs/")
    text = page_text(response)
    assert "Computer Science" in text
    assert "Ingested here cs.DC Distributed Computing 3 papers · latest Fri 2 Oct" in text
    # The categories nobody fetches are no dead ends: they say so and point to arXiv.
    assert "0 papers" not in text
    assert "Not ingested here yet" in text
    assert "cs.LG Machine Learning on arXiv" in text
    assert 'href="https://arxiv.org/list/cs.LG/new"' in response.content.decode()
    assert 'href="/list/cs.LG/"' not in response.content.decode()


def test_atom_feed(client, cs_dc):
    list_paper(
        make_paper(arxiv_id="2610.00007", title="Fast $O(n)$ gossip"), category=cs_dc, date=FRIDAY
    )
    list_paper(make_paper(arxiv_id="2610.00008", hidden=True), category=cs_dc, date=FRIDAY)
    response = client.get("/list/cs.DC/feed/")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    body = response.content.decode()
    assert "<title>Fast O(n) gossip</title>" in body
    assert "/abs/2610.00007/" in body
    assert "2610.00008" not in body


def test_watching_page_merges_watched_categories(client, cs_dc, reader):
    from papers.models import Category

    cs_ni = Category.objects.get(code="cs.NI")
    list_paper(make_paper(arxiv_id="2610.00001", title="Gossip"), category=cs_dc, date=FRIDAY)
    list_paper(
        make_paper(arxiv_id="2610.00002", title="Routing", primary="cs.NI"),
        category=cs_ni,
        date=FRIDAY,
    )
    list_paper(
        make_paper(arxiv_id="2610.00003", title="Unwatched", primary="cs.LG"),
        category=Category.objects.get(code="cs.LG"),
        date=FRIDAY,
    )
    client.force_login(reader)
    assert "You are not watching any category" in page_text(client.get("/watching/"))
    cs_dc.toggle_watch(reader)
    cs_ni.toggle_watch(reader)
    response = client.get("/watching/")
    assert paper_ids_in_order(response) == ["2610.00001", "2610.00002"]
    text = page_text(response)
    assert "Distributed Computing Gossip" in text
    assert "Networking and Internet Architecture Routing" in text


def test_watching_needs_a_login(client):
    response = client.get("/watching/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_watching_page_query_count_is_fixed(client, cs_dc, reader):
    cs_dc.toggle_watch(reader)
    client.force_login(reader)

    def count_queries() -> int:
        return queries_for(client, "/watching/")

    make_listed_papers(2, category=cs_dc, date=FRIDAY, first_number=1)
    count_queries()  # warm the per-process term matcher
    # Each count is of a page with papers it has not shown yet (their stars are read then).
    make_listed_papers(1, category=cs_dc, date=FRIDAY, first_number=50)
    few = count_queries()
    make_listed_papers(25, category=cs_dc, date=THURSDAY, first_number=100)
    assert count_queries() == few


def test_atom_feed_query_count_is_fixed(client, cs_dc):
    def count_queries() -> int:
        return queries_for(client, "/list/cs.DC/feed/")

    make_listed_papers(2, category=cs_dc, date=FRIDAY, first_number=1)
    few = count_queries()
    make_listed_papers(20, category=cs_dc, date=THURSDAY, first_number=100)
    assert count_queries() == few


def test_archive_query_count_is_fixed(client, cs_dc, reader):
    from papers.models import Category

    client.force_login(reader)  # signed in: no page cache in the way

    def count_queries() -> int:
        return queries_for(client, "/archive/cs/")

    few = count_queries()
    for offset, code in enumerate(("cs.LG", "cs.NI", "cs.OS")):
        category = Category.objects.get(code=code)
        make_listed_papers(3, category=category, date=FRIDAY, first_number=10 * offset + 1)
    assert count_queries() == few <= 3  # session, user, the categories with their counts
