"""Moving between announcement days: newer/older links, the recent days with their counts,
a notice on dates without an announcement (weekends, holidays), and each day's replacements."""

from __future__ import annotations

import datetime as dt

import pytest

from papers.models import Listing
from tests.factories import list_paper, make_listed_papers, make_paper
from tests.html import Page, page_text
from tests.papers.pages import paper_ids_in_order, replaced_ids_in_order

pytestmark = pytest.mark.django_db

REPLACE = Listing.AnnounceType.REPLACE
# Thanksgiving 2026 is Thursday 26 November: arXiv announces nothing that evening, so there
# is no listing dated Friday 27 November, and none on the weekend.
TUESDAY, WEDNESDAY, THANKSGIVING = (
    dt.date(2026, 11, 24),
    dt.date(2026, 11, 25),
    dt.date(2026, 11, 26),
)
FRIDAY_AFTER, SATURDAY, MONDAY = dt.date(2026, 11, 27), dt.date(2026, 11, 28), dt.date(2026, 11, 30)


@pytest.fixture
def week(cs_dc):
    """Tuesday to Monday around Thanksgiving: 2, 3, 1 and 2 papers, and some replacements."""
    for day, count, first in [(TUESDAY, 2, 100), (WEDNESDAY, 3, 200), (THANKSGIVING, 1, 300)]:
        make_listed_papers(count, category=cs_dc, date=day, first_number=first)
    make_listed_papers(2, category=cs_dc, date=MONDAY, first_number=400)
    for number, day in [(101, WEDNESDAY), (102, WEDNESDAY), (201, MONDAY)]:
        paper = make_paper(arxiv_id=f"2610.{number:05d}", title=f"Replaced {number}")
        list_paper(paper, category=cs_dc, date=day, announce_type=REPLACE)
    return cs_dc


def links(response, rel: str) -> list[str]:
    return [a.attrs["href"] for a in Page.of(response).select("a", rel=rel, href=...)]


def test_a_saturday_says_there_was_no_announcement_and_shows_the_day_before(client, week):
    response = client.get(f"/list/cs.DC/{SATURDAY}/")
    text = page_text(response)
    assert "No announcement on Saturday 28 November; showing from Thursday 26 November." in text
    assert paper_ids_in_order(response)[0] == "2611.00300"


def test_the_friday_after_thanksgiving_says_so_too(client, week):
    text = page_text(client.get(f"/list/cs.DC/{FRIDAY_AFTER}/"))
    assert "No announcement on Friday 27 November; showing from Thursday 26 November." in text


def test_a_day_with_an_announcement_has_no_notice(client, week):
    assert "No announcement" not in page_text(client.get(f"/list/cs.DC/{THANKSGIVING}/"))
    assert "No announcement" not in page_text(client.get("/list/cs.DC/"))


def test_newer_and_older_day_links_skip_the_holiday_and_the_weekend(client, week):
    thursday = client.get(f"/list/cs.DC/{THANKSGIVING}/")
    assert links(thursday, "prev")[0] == f"/list/cs.DC/{MONDAY}/"
    assert links(thursday, "next")[0] == f"/list/cs.DC/{WEDNESDAY}/"
    assert "← Newer day: Mon 30 Nov" in page_text(thursday)
    assert "Older day: Wed 25 Nov →" in page_text(thursday)
    saturday = client.get(f"/list/cs.DC/{SATURDAY}/")
    assert links(saturday, "prev")[0] == f"/list/cs.DC/{MONDAY}/"
    assert links(saturday, "next")[0] == f"/list/cs.DC/{WEDNESDAY}/"
    newest = client.get("/list/cs.DC/")
    assert "Newer day" not in page_text(newest)
    assert links(newest, "next")[0] == f"/list/cs.DC/{THANKSGIVING}/"
    oldest = client.get(f"/list/cs.DC/{TUESDAY}/")
    assert "Older day" not in page_text(oldest)


def test_the_recent_days_index_lists_announcement_days_with_their_counts(client, week):
    response = client.get(f"/list/cs.DC/{SATURDAY}/")
    text = page_text(response)
    assert (
        "Recent days Mon 30 Nov 2 new · 1 replaced Thu 26 Nov 1 new "
        "Wed 25 Nov 3 new · 2 replaced Tue 24 Nov 2 new"
    ) in text
    assert "Fri 27 Nov" not in text and "Sat 28 Nov" not in text
    # The day being shown is marked.
    assert f'<a href="/list/cs.DC/{THANKSGIVING}/" aria-current="date">' in (
        response.content.decode()
    )


def test_each_day_shows_its_replacements_after_its_papers(client, week):
    response = client.get("/list/cs.DC/")
    text = page_text(response)
    assert replaced_ids_in_order(response) == ["2610.00201", "2610.00101", "2610.00102"]
    monday = text.index("Monday 30 November")
    wednesday = text.index("Wednesday 25 November")
    assert monday < text.index("Replacements (1)") < text.index("Thursday 26 November")
    assert wednesday < text.index("Replacements (2)")
    assert "Distributed Computing · Replaced with v1 Replaced 101" in text


def test_the_counts_agree_everywhere(client, week):
    """What the archive counts is what the pages reach, and the day index says the same."""
    response = client.get(f"/list/cs.DC/{MONDAY}/")
    assert len(paper_ids_in_order(response)) == 8
    assert len(replaced_ids_in_order(response)) == 3
    assert "8 papers · 3 replacements" in page_text(client.get("/archive/cs/"))


def test_a_day_running_across_pages_shows_its_replacements_where_it_ends(client, cs_dc):
    make_listed_papers(25, category=cs_dc, date=MONDAY, first_number=1)
    make_listed_papers(20, category=cs_dc, date=THANKSGIVING, first_number=100)
    for number, day in [(900, MONDAY), (901, THANKSGIVING)]:
        paper = make_paper(arxiv_id=f"2610.{number:05d}")
        list_paper(paper, category=cs_dc, date=day, announce_type=REPLACE)
    first, second = client.get("/list/cs.DC/"), client.get("/list/cs.DC/?page=2")
    assert replaced_ids_in_order(first) == ["2610.00900"]
    assert replaced_ids_in_order(second) == ["2610.00901"]
    assert "Replacements (1)" in page_text(second)


def test_a_day_of_replacements_only_is_still_reachable(client, cs_dc):
    make_listed_papers(1, category=cs_dc, date=MONDAY, first_number=1)
    make_listed_papers(1, category=cs_dc, date=TUESDAY, first_number=2)
    paper = make_paper(arxiv_id="2610.00777")
    list_paper(paper, category=cs_dc, date=WEDNESDAY, announce_type=REPLACE)
    text = page_text(client.get("/list/cs.DC/"))
    assert text.index("Monday 30 November") < text.index("Wednesday 25 November")
    assert text.index("Replacements (1)") < text.index("Tuesday 24 November")
    assert replaced_ids_in_order(client.get(f"/list/cs.DC/{WEDNESDAY}/")) == ["2610.00777"]


def test_a_hidden_replacement_is_not_shown_or_counted(client, cs_dc):
    make_listed_papers(1, category=cs_dc, date=MONDAY, first_number=1)
    paper = make_paper(arxiv_id="2610.00777", hidden=True)
    list_paper(paper, category=cs_dc, date=MONDAY, announce_type=REPLACE)
    response = client.get("/list/cs.DC/")
    assert "Replacements" not in page_text(response)
    assert "replaced" not in page_text(response)


def test_a_date_before_everything_keeps_the_empty_state(client, week):
    text = page_text(client.get("/list/cs.DC/2026-01-01/"))
    assert "No papers on or before 1 January 2026" in text


def test_a_date_not_yet_announced_says_so(client, week):
    text = page_text(client.get("/list/cs.DC/2099-01-02/"))
    assert (
        "Nothing is announced for Friday 2 January 2099 yet; showing from Monday 30 November."
        in (text)
    )


def test_a_category_nobody_ingests_says_so_instead_of_showing_nothing(client, cs_dc):
    text = page_text(client.get("/list/cs.LG/"))
    assert "Not ingested here yet" in text
    assert "Recent days" not in text and "No announcement" not in text


def test_past_the_first_page_newer_and_older_are_around_the_pages_first_day(client, cs_dc):
    make_listed_papers(35, category=cs_dc, date=MONDAY, first_number=1)
    make_listed_papers(30, category=cs_dc, date=THANKSGIVING, first_number=100)
    make_listed_papers(1, category=cs_dc, date=WEDNESDAY, first_number=200)
    third = client.get("/list/cs.DC/?page=3")  # opens on Thursday, continued from page 2
    assert page_text(third).index("Thursday 26 November") < page_text(third).index("Wednesday")
    assert "← Newer day: Mon 30 Nov" in page_text(third)
    assert "Older day: Wed 25 Nov →" in page_text(third)
