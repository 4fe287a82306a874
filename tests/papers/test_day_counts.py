"""The counts a category page shows (its recent days, its pages) are kept by the database as
listings come and go and papers are hidden or shown (papers/sql/day_counts.sql): each change
shows on the next request, and what is kept always equals a count of the listings themselves."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import connection
from django.db.models import Count, Q

from papers.history.snapshot import import_snapshot
from papers.models import Category, CategoryDay, Listing, Paper
from tests.factories import list_paper, make_listed_papers, make_paper
from tests.html import page_text
from tests.papers.pages import paper_ids_in_order, queries_for, replaced_ids_in_order

pytestmark = pytest.mark.django_db

REPLACE = Listing.AnnounceType.REPLACE
MONDAY, TUESDAY, WEDNESDAY = dt.date(2026, 11, 30), dt.date(2026, 11, 24), dt.date(2026, 11, 25)


def recounted() -> list[tuple[int, dt.date, int, int]]:
    """Every (category, day) with its visible papers and replacements, counted from the rows."""
    stream = Q(announce_type__in=Listing.STREAM_TYPES)
    rows = (
        Listing.objects.filter(paper__hidden=False)
        .values("category_id", "date")
        .annotate(papers=Count("id", filter=stream), replaced=Count("id", filter=~stream))
        .order_by("category_id", "date")
    )
    return [(r["category_id"], r["date"], r["papers"], r["replaced"]) for r in rows]


def kept() -> list[tuple[int, dt.date, int, int]]:
    return list(
        CategoryDay.objects.order_by("category_id", "date").values_list(
            "category_id", "date", "papers", "replacements"
        )
    )


def recent_days(client) -> str:
    text = page_text(client.get("/list/cs.DC/"))
    return text[text.index("Recent days") : text.index("Atom feed")].split("Monday")[0]


@pytest.fixture
def two_days(cs_dc):
    make_listed_papers(2, category=cs_dc, date=MONDAY, first_number=1)
    make_listed_papers(1, category=cs_dc, date=TUESDAY, first_number=100)
    return cs_dc


def test_a_new_listing_counts_at_once(client, two_days):
    assert "Mon 30 Nov 2 new Tue 24 Nov 1 new" in recent_days(client)
    paper = make_paper(arxiv_id="2611.00050")
    list_paper(paper, category=two_days, date=MONDAY)
    list_paper(make_paper(arxiv_id="2611.00051"), category=two_days, date=WEDNESDAY)
    assert "Mon 30 Nov 3 new Wed 25 Nov 1 new Tue 24 Nov 1 new" in recent_days(client)
    assert "2611.00050" in paper_ids_in_order(client.get("/list/cs.DC/"))
    assert kept() == recounted()


def test_a_hidden_paper_leaves_the_counts_and_comes_back_when_shown(client, two_days):
    only = Listing.objects.get(category=two_days, date=TUESDAY).paper
    client.get("/list/cs.DC/")
    Paper.objects.filter(pk=only.pk).update(hidden=True)
    # Its day had nothing else: it is no announcement day any more.
    days = recent_days(client)
    assert "Mon 30 Nov 2 new" in days and "Tue 24 Nov" not in days
    assert kept() == recounted()
    Paper.objects.filter(pk=only.pk).update(hidden=False)
    assert "Mon 30 Nov 2 new Tue 24 Nov 1 new" in recent_days(client)
    # A hidden replacement counts nowhere either, and shows once its paper does.
    replaced = make_paper(arxiv_id="2610.00777", hidden=True)
    list_paper(replaced, category=two_days, date=MONDAY, announce_type=REPLACE)
    assert "replaced" not in recent_days(client)
    replaced.hidden = False
    replaced.save()  # as the admin saves it: every column written
    assert "Mon 30 Nov 2 new · 1 replaced" in recent_days(client)
    assert replaced_ids_in_order(client.get("/list/cs.DC/")) == ["2610.00777"]
    assert kept() == recounted()


def test_a_deleted_listing_leaves_the_counts(client, two_days):
    client.get("/list/cs.DC/")
    Listing.objects.filter(category=two_days, date=MONDAY).first().delete()  # type: ignore[union-attr]
    assert "Mon 30 Nov 1 new Tue 24 Nov 1 new" in recent_days(client)
    Listing.objects.filter(category=two_days, date=TUESDAY).delete()
    assert "Tue 24 Nov" not in recent_days(client)
    assert kept() == recounted()


def test_a_listing_moved_to_another_day_or_type_is_counted_there(client, two_days):
    Listing.objects.filter(category=two_days, date=TUESDAY).update(date=WEDNESDAY)
    assert "Mon 30 Nov 2 new Wed 25 Nov 1 new" in recent_days(client)
    Listing.objects.filter(category=two_days, date=WEDNESDAY).update(announce_type=REPLACE)
    assert "Wed 25 Nov 0 new · 1 replaced" in recent_days(client)
    assert kept() == recounted()


def test_a_deleted_paper_or_category_takes_its_counts_along(client, two_days):
    Paper.objects.filter(listings__date=TUESDAY).get().delete()
    assert "Tue 24 Nov" not in recent_days(client)
    assert kept() == recounted()
    Category.objects.filter(pk=two_days.pk).delete()
    assert kept() == recounted() == []


def test_the_pages_follow_the_counts(client, cs_dc):
    make_listed_papers(31, category=cs_dc, date=MONDAY, first_number=1)
    assert "Page 1 of 2" in page_text(client.get("/list/cs.DC/"))
    Paper.objects.filter(arxiv_id="2611.00031").update(hidden=True)
    assert "Page 1 of" not in page_text(client.get("/list/cs.DC/"))
    assert client.get("/list/cs.DC/?page=2").status_code == 404
    assert len(paper_ids_in_order(client.get("/list/cs.DC/"))) == 30


def test_listings_stored_before_their_papers_count_too(cs_dc):
    """The bulk history writes listings before their papers (the foreign keys wait for the
    commit): the papers' arrival counts them."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence('papers_paper', 'id'))")
        (paper_id,) = cursor.fetchone()
        cursor.execute(
            "INSERT INTO papers_listing (category_id, paper_id, date, announce_type, version)"
            " VALUES (%s, %s, %s, 'new', 1)",
            [cs_dc.pk, paper_id, MONDAY],
        )
        assert kept() == []
        cursor.execute(
            "INSERT INTO papers_paper (id, arxiv_id, version, title, title_html, abstract,"
            " abstract_html, authors, authors_text, typesetter_version, primary_category,"
            " categories, comment, journal_ref, doi, license, hidden, created_at, modified_at,"
            " stamp) VALUES (%s, '2611.09999', 1, 'T', 'T', '', '', '[]', '', 0, 'cs.DC',"
            " '[\"cs.DC\"]', '', '', '', '', false, now(), now(), 0)",
            [paper_id],
        )
    assert kept() == recounted() == [(cs_dc.pk, MONDAY, 1, 0)]


def test_an_imported_history_is_counted_as_it_is_listed(cs_dc, client):
    from tests.papers.test_history import SNAPSHOT

    cs_lg, _ = Category.objects.get_or_create(
        code="cs.LG",
        defaults={"name": "Machine Learning", "archive_code": "cs", "archive_name": "CS"},
    )
    import_snapshot(path=SNAPSHOT, categories=[cs_dc, cs_lg])
    assert kept() == recounted() != []
    import_snapshot(path=SNAPSHOT, categories=[cs_dc, cs_lg])  # a re-run changes nothing
    assert kept() == recounted()
    assert "Tue 16 Jan 2024 1 new" in page_text(client.get("/list/cs.DC/"))


def test_the_category_page_after_an_edit_costs_four_queries(client, cs_dc):
    papers = make_listed_papers(30, category=cs_dc, date=MONDAY, first_number=1)
    make_listed_papers(5, category=cs_dc, date=TUESDAY, first_number=100)
    replaced = make_paper(arxiv_id="2610.00777")
    list_paper(replaced, category=cs_dc, date=MONDAY, announce_type=REPLACE)
    # Every entry is kept from here on.
    queries_for(client, "/list/cs.DC/")
    queries_for(client, f"/list/cs.DC/{MONDAY}/?page=2")
    for number in range(3):
        Paper.objects.filter(pk=papers[number].pk).update(comment=f"edit {number}")
        # The facts; the category with its days; the page's entries; the edited paper.
        assert queries_for(client, "/list/cs.DC/") == 4
        # A later page does not show the paper: the days around its first day instead.
        assert queries_for(client, f"/list/cs.DC/{MONDAY}/?page=2") <= 4  # + the days around
