"""Term research: mentions per month over the years and the base rate, counted as papers arrive
(bulk history, a day's ingest), never on a reader's request."""

from __future__ import annotations

import datetime as dt

import pytest

from market import research
from market.models import Term
from papers.history.snapshot import import_snapshot
from papers.models import Category, MentionMonth
from papers.signals import listings_announced
from tests.factories import announce
from tests.html import Page
from tests.papers.helpers import FIXTURES

pytestmark = pytest.mark.django_db

SNAPSHOT = FIXTURES / "history" / "snapshot.jsonl"


@pytest.fixture(autouse=True)
def eager_celery():
    """The recount is queued: run it in process even when the suite has a broker."""
    from peerrevenue.celery import app

    before = app.conf.task_always_eager, app.conf.task_eager_propagates
    app.conf.task_always_eager = app.conf.task_eager_propagates = True
    yield
    app.conf.task_always_eager, app.conf.task_eager_propagates = before


@pytest.fixture
def categories(cs_dc) -> dict[str, Category]:
    cs_lg, _ = Category.objects.get_or_create(
        code="cs.LG",
        defaults={"name": "Machine Learning", "archive_code": "cs", "archive_name": "CS"},
    )
    return {"cs.DC": cs_dc, "cs.LG": cs_lg}


def counts(term: Term) -> set[tuple[str, str, int]]:
    return {
        (row.category.code if row.category else "all", f"{row.month:%Y-%m}", row.papers)
        for row in MentionMonth.objects.filter(term_id=term.pk).select_related("category")
    }


def test_history_is_counted_by_month_category_and_once_over_all(categories):
    consensus = Term.objects.create(phrase="consensus")
    replication = Term.objects.create(phrase="replication")

    import_snapshot(path=SNAPSHOT, categories=list(categories.values()))

    # 2401.00101 (cs.DC, cross-listed in cs.LG) says "consensus" in its title and abstract.
    assert counts(consensus) == {
        ("all", "2024-01", 1),
        ("cs.DC", "2024-01", 1),
        ("cs.LG", "2024-01", 1),
    }
    # 2312.00103 was listed in December 2023 (Wednesday 27th).
    assert counts(replication) == {("all", "2023-12", 1), ("cs.DC", "2023-12", 1)}


def test_a_recount_counts_nothing_twice(categories):
    consensus = Term.objects.create(phrase="consensus")
    import_snapshot(path=SNAPSHOT, categories=list(categories.values()))
    before = counts(consensus)

    research.recount()
    research.recount(months=[dt.date(2024, 1, 9)])

    assert counts(consensus) == before


def test_a_days_ingest_recounts_its_month(categories):
    consensus = Term.objects.create(phrase="consensus")
    day = dt.date(2026, 11, 24)
    for _ in range(3):
        announce(
            None, date=day, category=categories["cs.DC"], title="A", abstract="Fast consensus."
        )
    announce(None, date=day, category=categories["cs.DC"], title="B", abstract="Nothing.")

    listings_announced.send(sender=Category, category=categories["cs.DC"], date=day)

    assert counts(consensus) == {("all", "2026-11", 3), ("cs.DC", "2026-11", 3)}


def test_the_base_rate_is_the_last_twelve_months_a_week():
    assert research.Rate("cs.DC", 14.2).sentence == "about 14 papers a week in cs.DC mention it"
    assert research.Rate("cs.DC", 0.8).sentence == "about 3 papers a month in cs.DC mention it"
    assert (
        research.Rate("cs.DC", 0.05).sentence == "fewer than one paper a month in cs.DC mentions it"
    )


def test_for_term_gives_the_years_and_the_busiest_categories(categories):
    term = Term.objects.create(phrase="consensus")
    rows = [
        (None, dt.date(2023, 3, 1), 5),
        (None, dt.date(2025, 12, 1), 700),
        (categories["cs.DC"].pk, dt.date(2025, 12, 1), 730),
        (categories["cs.LG"].pk, dt.date(2025, 12, 1), 52),
        (categories["cs.LG"].pk, dt.date(2024, 12, 1), 9_999),  # more than a year before
    ]
    MentionMonth.objects.bulk_create(
        MentionMonth(term_id=term.pk, category_id=c, month=m, papers=n) for c, m, n in rows
    )

    found = research.for_term(term, today=dt.date(2026, 12, 2))

    assert found is not None
    assert [(year.year, year.total) for year in found.years] == [(2023, 5), (2024, 0), (2025, 700)]
    assert found.years[0].months[2] == 5 and found.years[2].months[11] == 700
    assert [rate.sentence for rate in found.rates] == [
        "about 14 papers a week in cs.DC mention it",
        "about 4 papers a month in cs.LG mention it",
    ]
    assert found.total == 705


def test_the_term_page_shows_the_research(client, categories):
    term = Term.objects.create(phrase="consensus")
    import_snapshot(path=SNAPSHOT, categories=list(categories.values()))

    page = Page.of(client.get(term.get_absolute_url()))

    section = page.one("section", cls="term-research")
    assert "Fewer than one paper a month in cs.DC mentions it" in section.text
    assert "Mentions month by month since 2024 (1 paper)" in section.text
    assert section.row("2024")[1:3] == ["1", "0"]


def test_a_term_not_counted_yet_says_so(client, db):
    term = Term.objects.create(phrase="gossip")
    page = Page.of(client.get(term.get_absolute_url()))
    assert "Not counted yet" in page.one("section", cls="term-research").text


def test_a_recount_made_after_the_page_was_kept_shows_at_once(client, categories):
    term = Term.objects.create(phrase="consensus")
    import_snapshot(path=SNAPSHOT, categories=list(categories.values()))
    MentionMonth.objects.all().delete()  # as if the worker had not counted yet
    assert "Not counted yet" in Page.of(client.get(term.get_absolute_url())).text
    # The worker counts later, writing only its own rows: the term page's papers piece is
    # keyed by the research stamp those writes move, so the next render shows them.
    research.recount()
    section = Page.of(client.get(term.get_absolute_url())).one("section", cls="term-research")
    assert "Mentions month by month since 2024 (1 paper)" in section.text
