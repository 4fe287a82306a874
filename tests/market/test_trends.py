"""The mention trend on a term's page: papers per week over the whole ingested history,
before and after the term was listed, counted by the dividend rules."""

from __future__ import annotations

import datetime as dt

import pytest

from market import trends
from market.models import Term
from papers.models import Category, Listing, Paper
from peerrevenue import keep
from tests.factories import list_paper, make_paper
from tests.html import Page

pytestmark = pytest.mark.django_db

WEEK_1, WEEK_2, WEEK_3, WEEK_4 = (dt.date(2026, 11, 2) + dt.timedelta(weeks=n) for n in range(4))


def weekly(term: Term) -> list[trends.WeekCount]:
    """The trend as a term page reads it: under the stamps read with the page's facts."""
    return trends.weekly_mentions(term=term, facts=keep.read(None, "papers"))


def paper(title: str, abstract: str, *, day: dt.date, category, **kwargs):
    made = make_paper(title=title, abstract=abstract, hidden=kwargs.pop("hidden", False))
    list_paper(made, category=category, date=day, **kwargs)
    return made


@pytest.fixture
def history(cs_dc):
    """Four weeks of papers; "KV cache" was listed on Tuesday 10 November (week 2)."""
    cs_lg = Category.objects.get(code="cs.LG")
    term = Term.objects.create(phrase="KV cache", aliases=["key-value cache"])
    Term.objects.filter(pk=term.pk).update(listed_at=dt.datetime(2026, 11, 10, 15, tzinfo=dt.UTC))
    term.refresh_from_db()
    # Week 1 (before listing): the title, a plural with a hyphen, an alias; one without.
    paper("Shrinking the KV cache", "On memory.", day=WEEK_1 + dt.timedelta(1), category=cs_dc)
    paper("Serving", "Paged KV-caches help.", day=WEEK_1 + dt.timedelta(3), category=cs_dc)
    paper("Serving", "A key-value cache for LLMs.", day=WEEK_1 + dt.timedelta(3), category=cs_dc)
    paper("Caching", "Cache-aware scheduling, not a KV thing.", day=WEEK_1, category=cs_dc)
    # Mentioned twice in one paper, and cross-listed a week later: one paper, in week 1.
    twice = paper("KV cache", "The KV cache again.", day=WEEK_1 + dt.timedelta(4), category=cs_dc)
    list_paper(twice, category=cs_lg, date=WEEK_2, announce_type=Listing.AnnounceType.CROSS)
    # Week 2: hidden papers and replacements do not count.
    paper("KV cache", "Hidden.", day=WEEK_2, category=cs_dc, hidden=True)
    old = make_paper(title="KV cache in 2025", abstract="Old.")
    list_paper(old, category=cs_dc, date=WEEK_2, announce_type=Listing.AnnounceType.REPLACE)
    # Week 3 is quiet; week 4 (after listing) has one, cross-listed from elsewhere.
    paper("Other", "Nothing here.", day=WEEK_3, category=cs_dc)
    paper("Offload", "KV cache offload.", day=WEEK_4, category=cs_dc, announce_type="cross")
    return term


def test_weekly_counts_cover_the_whole_history_by_the_dividend_rules(history):
    weeks = weekly(history)
    assert [(w.week, w.papers) for w in weeks] == [
        (WEEK_1, 4),
        (WEEK_2, 0),
        (WEEK_3, 0),
        (WEEK_4, 1),
    ]
    assert trends.listing_week(history) == WEEK_2


def test_the_longer_of_two_overlapping_terms_takes_the_mention(history, cs_dc):
    Term.objects.create(phrase="paged KV cache")
    weeks = weekly(Term.objects.get(phrase="KV cache"))
    assert weeks[0].papers == 3  # "Paged KV-caches" now counts for the longer term


def test_a_new_listing_starts_a_fresh_count(history, cs_dc):
    assert weekly(history)[-1].papers == 1
    paper("More", "Another KV cache.", day=WEEK_4 + dt.timedelta(1), category=cs_dc)
    assert weekly(history)[-1].papers == 2


def test_an_edited_or_hidden_paper_changes_the_count_at_once(history, cs_dc):
    assert weekly(history)[-1].papers == 1
    offload = Paper.objects.get(title="Offload")
    Paper.objects.filter(pk=offload.pk).update(abstract="Offloading, with no cache at all.")
    assert weekly(history)[-1].papers == 0
    Paper.objects.filter(pk=offload.pk).update(abstract="KV cache offload.")
    assert weekly(history)[-1].papers == 1
    Paper.objects.filter(pk=offload.pk).update(hidden=True)
    assert weekly(history)[-1].papers == 0


def test_a_halted_term_still_has_its_trend(history):
    Term.objects.filter(pk=history.pk).halt(reason="Checking")
    history.refresh_from_db()
    assert [w.papers for w in weekly(history)] == [4, 0, 0, 1]


def test_no_papers_no_trend(kv_cache):
    assert weekly(kv_cache) == []


def test_term_page_shows_the_trend_with_the_listing_week_marked(client, history):
    page = Page.of(client.get("/market/kv-cache/"))
    assert "Mentions per week" in page.text
    chart = page.one("svg", cls="trend-chart")
    assert chart.one("desc").text == (
        "5 mentioning papers in 4 weeks from 2 Nov 2026; the most in one week, 4, in the week "
        "of 2 Nov 2026. Listed in the week of 9 Nov 2026: 4 before, 1 since."
    )
    assert len(page.select(cls="trend-chart__bar--before")) == 1
    assert len(page.select(cls="trend-chart__bar--after")) == 1
    assert "listed" in chart.texts("text")
    # The text alternative: every week in a table, newest first, the listing week marked.
    table = page.one("details", cls="trend-table")
    assert table.one("summary").text == "The weekly counts as a table"
    weeks = [cells[0] for cells in table.rows()[1:]]
    assert weeks.index("23 Nov 2026") < weeks.index("2 Nov 2026")
    listed = table.row_of("9 Nov 2026").cells()[0]
    assert listed.texts("time") == ["9 Nov 2026"] and listed.texts(cls="badge") == ["listed"]


def test_the_weeks_reach_a_listing_newer_than_the_last_paper(history):
    Term.objects.filter(pk=history.pk).update(listed_at=dt.datetime(2026, 12, 8, tzinfo=dt.UTC))
    history.refresh_from_db()
    weeks = weekly(history)
    assert [(w.week, w.papers) for w in weeks][-3:] == [
        (WEEK_4, 1),
        (dt.date(2026, 11, 30), 0),
        (dt.date(2026, 12, 7), 0),
    ]


def test_plurals_of_a_one_word_term_are_found_by_the_narrowing_query(cs_dc):
    term = Term.objects.create(phrase="policy")
    paper("Eviction policies", "Learned ones.", day=WEEK_1, category=cs_dc)
    paper("Policing traffic", "Not a policy paper? It is.", day=WEEK_1, category=cs_dc)
    paper("Politics", "Nothing.", day=WEEK_1, category=cs_dc)
    assert weekly(term)[0] == trends.WeekCount(WEEK_1, 2)


def test_an_ingested_day_counts_every_trend_in_the_worker(cs_dc, django_assert_max_num_queries):
    from papers.signals import listings_announced

    term = Term.objects.create(phrase="gossip", listed_at=dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
    day = dt.date(2026, 11, 24)
    list_paper(make_paper(title="Gossip at scale", abstract="We gossip."), category=cs_dc, date=day)

    listings_announced.send(sender=type(cs_dc), category=cs_dc, date=day)

    # The page then finds the count kept: the stamps it is kept under and the weeks of the
    # history, none for the papers.
    with django_assert_max_num_queries(2):
        weeks = weekly(term)
    assert sum(week.papers for week in weeks) == 1


def test_the_legend_speaks_of_pale_bars_when_there_are_some(client, history):
    caption = Page.of(client.get("/market/kv-cache/")).one("figure", cls="trend-figure")
    assert "Pale bars are weeks before it was listed" in caption.one("figcaption").text


def test_without_mentions_before_the_listing_the_legend_has_no_pale_bars(client, cs_dc):
    term = Term.objects.create(phrase="KV cache")
    Term.objects.filter(pk=term.pk).update(listed_at=dt.datetime(2026, 10, 1, tzinfo=dt.UTC))
    paper("Shrinking the KV cache", "On memory.", day=WEEK_1, category=cs_dc)
    page = Page.of(client.get("/market/kv-cache/"))
    assert page.select(cls="trend-chart__bar--after")
    assert not page.select(cls="trend-chart__bar--before")
    legend = page.one("figure", cls="trend-figure").one("figcaption").text
    assert "Pale bars" not in legend
    assert "The dashed line marks the week it was listed (week of 28 Sep 2026)" in legend


def test_a_single_week_of_mentions_is_one_slim_bar_over_its_date(cs_dc):
    from market.trend_charts import MAX_BAR_WIDTH, mention_trend_chart

    chart = Page.parse(
        mention_trend_chart(
            [trends.WeekCount(WEEK_1, 10)], label="Papers each week", listed_week=WEEK_1
        )
    )
    bar = chart.one("rect", cls="trend-chart__bar")
    width, x = float(bar.attrs["width"]), float(bar.attrs["x"])
    assert width <= MAX_BAR_WIDTH
    # The week's date is written under the middle of its bar.
    label = next(t for t in chart.select("text") if t.text == "2 Nov")
    assert abs(float(label.attrs["x"]) - (x + width / 2)) < 1
