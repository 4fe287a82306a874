"""An admin brings a category in: enable it and backfill its recent past from the admin, and
watch the backfill's progress on the category's page."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from papers.models import Category, IngestRun, Listing
from tests.html import page_text
from tests.papers.helpers import Reply, atom_entry, atom_feed

pytestmark = pytest.mark.django_db


@pytest.fixture
def cs_lg(db):
    category = Category.objects.get(code="cs.LG")
    assert not category.ingest_enabled
    return category


def serve(arxiv_server, *, total: int = 3) -> None:
    day = timezone.now() - dt.timedelta(days=3)
    entries = [
        atom_entry(
            f"2611.{number:05d}",
            published=(day + dt.timedelta(minutes=number)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            primary="cs.LG",
            title=f"Learning {number}",
        )
        for number in range(1, total + 1)
    ]

    def page(request):
        start, size = int(request.param("start")), int(request.param("max_results"))
        return Reply(200, atom_feed(entries[start : start + size], total=total, start=start))

    arxiv_server.route_function("/api/query", page)


def act(staff, action: str, category: Category):
    return staff.post(
        "/admin/papers/category/",
        {"action": action, "_selected_action": [category.pk]},
        follow=True,
    )


def test_enable_and_backfill_from_the_admin(
    staff, client, cs_lg, arxiv_server, django_capture_on_commit_callbacks
):
    serve(arxiv_server)
    with django_capture_on_commit_callbacks(execute=True):
        response = act(staff, "enable_and_backfill", cs_lg)
    assert "Enabled cs.LG and sent a backfill of the last 14 days" in page_text(response)
    cs_lg.refresh_from_db()
    assert cs_lg.ingest_enabled
    assert Listing.objects.filter(category=cs_lg).count() == 3

    progress = IngestRun.objects.get(category=cs_lg, source__startswith="Backfill")
    assert progress.status == IngestRun.Status.SUCCEEDED
    assert progress.source.endswith(": done")
    assert (progress.items, progress.listings_created) == (3, 3)

    page = page_text(staff.get(f"/admin/papers/category/{cs_lg.pk}/change/"))
    assert "Recent ingest runs" in page
    assert "Succeeded" in page and "3 new, 3 listings" in page

    archive = page_text(client.get("/archive/cs/"))
    assert "cs.LG Machine Learning 3 papers" in archive


def test_a_failed_backfill_says_why_on_the_category_page(
    staff, cs_lg, arxiv_server, django_capture_on_commit_callbacks
):
    arxiv_server.route("/api/query", Reply(503, b"Service Unavailable"))
    with django_capture_on_commit_callbacks(execute=True):
        act(staff, "enable_and_backfill", cs_lg)
    progress = IngestRun.objects.get(category=cs_lg, source__startswith="Backfill")
    assert progress.status == IngestRun.Status.FAILED
    assert progress.error
    page = page_text(staff.get(f"/admin/papers/category/{cs_lg.pk}/change/"))
    assert "Failed" in page


def test_disable_keeps_the_papers(staff, cs_dc):
    from tests.factories import list_paper, make_paper

    list_paper(make_paper(), category=cs_dc, date=dt.date(2026, 11, 26))
    act(staff, "disable_ingest", cs_dc)
    cs_dc.refresh_from_db()
    assert not cs_dc.ingest_enabled
    assert Listing.objects.filter(category=cs_dc).count() == 1
