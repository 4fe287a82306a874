"""arXiv ids and category codes: the admin keeps only values the site can put in a URL.

A paper whose id the paper URL cannot take, or a category whose code cannot be one path segment,
makes reverse() fail, and every page listing the row answers 500. The curator hears about it
when saving instead, and the values the site makes itself (the seeded categories, the ids the
ingest reads) keep passing the same checks.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from urllib.parse import unquote

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import resolve, reverse
from hypothesis import given
from hypothesis import strategies as st

from papers.arxiv.documents import parse_feed
from papers.arxiv.fields import split_id
from papers.categories import COMPUTER_SCIENCE, CS_CATEGORIES
from papers.identifiers import (
    ARCHIVE_CODE_MESSAGE,
    ARXIV_ID,
    ARXIV_ID_MESSAGE,
    CATEGORY_CODE_MESSAGE,
    validate_archive_code,
    validate_arxiv_id,
    validate_category_code,
)
from papers.models import Category, Paper
from tests.factories import list_paper, make_paper
from tests.html import Page

# The paper form's licence box; Django's own deprecation notice, not ours.
pytestmark = pytest.mark.filterwarnings("ignore:The default scheme will be changed")

# The bundled sample days and the ingest tests' feeds, less those that are broken on purpose
# (arXiv's error feed is refused as the error it is).
FEEDS = sorted((Path(settings.BASE_DIR) / "sample").glob("*.rss")) + [
    path
    for path in sorted((Path(__file__).parent / "fixtures").glob("*.xml"))
    if path.name not in {"malformed.xml", "truncated.xml", "rss_error.xml"}
]
DAY = dt.date(2026, 11, 24)

BAD_ARXIV_IDS = [
    "2611.01234v2",  # with the version
    "arXiv:2611.01234",
    "2611.123",  # too few digits after the dot
    "math GT/0309136",
    "math.GT/309136",
    "cs.DC/0309136/",
    "../2611.01234",
    "not an id",
]
BAD_CATEGORY_CODES = [
    "cs/DC",
    "cs DC",
    "cs.DC/",
    "cs..DC",
    ".cs",
    "cs.",
    "cs.DC.x",
    "cs-",
    "..",
    "CS.DC",
]
BAD_ARCHIVE_CODES = ["c s", "cs/", "cs.DC", "astro-", "-ph", "CS", ".."]


def saved_papers() -> list[dict]:
    return list(Paper.objects.order_by("pk").values())


def saved_categories() -> list[dict]:
    return list(Category.objects.order_by("pk").values())


def assert_refused(response, message: str) -> None:
    assert response.status_code == 200
    page = response.content.decode()
    assert 'class="errornote"' in page  # the admin's "Please correct the error below."
    assert message in page


# The admin ------------------------------------------------------------------------------------


def paper_add_form(staff) -> dict[str, str]:
    url = reverse("admin:papers_paper_add")
    data = Page.of(staff.get(url)).form("paper_form")
    return data | {
        "version": "1",
        "title": "Gossip on trees",
        "primary_category": "cs.DC",
        "categories": '["cs.DC"]',
        "authors": "[]",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("arxiv_id", BAD_ARXIV_IDS)
def test_adding_a_paper_with_an_id_the_paper_url_cannot_take_is_refused(staff, arxiv_id):
    before = saved_papers()
    response = staff.post(
        reverse("admin:papers_paper_add"), paper_add_form(staff) | {"arxiv_id": arxiv_id}
    )
    assert_refused(response, ARXIV_ID_MESSAGE)
    assert saved_papers() == before


@pytest.mark.django_db
@pytest.mark.parametrize("arxiv_id", BAD_ARXIV_IDS)
def test_changing_a_paper_id_to_one_the_paper_url_cannot_take_is_refused(staff, cs_dc, arxiv_id):
    paper = make_paper(arxiv_id="2611.00001")
    list_paper(paper, category=cs_dc, date=DAY)
    url = reverse("admin:papers_paper_change", args=[paper.pk])
    data = Page.of(staff.get(url)).form("paper_form")
    before = saved_papers()
    assert_refused(staff.post(url, data | {"arxiv_id": arxiv_id}), ARXIV_ID_MESSAGE)
    assert saved_papers() == before
    assert Client().get("/list/cs.DC/").status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize(
    "arxiv_id", ["2611.01234", "0704.0001", "math.GT/0309136", "hep-th/9901001"]
)
def test_a_good_arxiv_id_still_saves_and_has_a_page(staff, arxiv_id):
    response = staff.post(
        reverse("admin:papers_paper_add"), paper_add_form(staff) | {"arxiv_id": arxiv_id}
    )
    assert response.status_code == 302, response.content.decode()
    paper = Paper.objects.get(arxiv_id=arxiv_id)
    assert Client().get(paper.get_absolute_url()).status_code == 200


def category_add_form(**values: str) -> dict[str, str]:
    return {
        "code": "astro-ph.CO",
        "name": "Cosmology and Nongalactic Astrophysics",
        "archive_code": "astro-ph",
        "archive_name": "Astrophysics",
    } | values


CODE_MESSAGES = {"code": CATEGORY_CODE_MESSAGE, "archive_code": ARCHIVE_CODE_MESSAGE}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [("code", code) for code in BAD_CATEGORY_CODES]
    + [("archive_code", code) for code in BAD_ARCHIVE_CODES],
)
def test_adding_a_category_with_a_code_its_pages_cannot_take_is_refused(staff, field, value):
    before = saved_categories()
    response = staff.post(reverse("admin:papers_category_add"), category_add_form(**{field: value}))
    assert_refused(response, CODE_MESSAGES[field])
    assert saved_categories() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [("code", "cs/DC"), ("code", "cs DC"), ("archive_code", "computer science")],
)
def test_changing_a_category_code_to_one_its_pages_cannot_take_is_refused(
    staff, cs_dc, field, value
):
    list_paper(make_paper(), category=cs_dc, date=DAY)
    url = reverse("admin:papers_category_change", args=[cs_dc.pk])
    data = Page.of(staff.get(url)).form("category_form")
    before = saved_categories()
    assert_refused(staff.post(url, data | {field: value}), CODE_MESSAGES[field])
    assert saved_categories() == before
    for page in ("/list/cs.DC/", "/list/cs.DC/feed/", "/archive/cs/"):
        assert Client().get(page).status_code == 200, page


@pytest.mark.django_db
def test_a_good_category_still_saves_and_has_its_pages(staff):
    response = staff.post(reverse("admin:papers_category_add"), category_add_form())
    assert response.status_code == 302, response.content.decode()
    category = Category.objects.get(code="astro-ph.CO")
    assert category.archive_code == "astro-ph"
    for page in (category.get_absolute_url(), "/list/astro-ph.CO/feed/", "/archive/astro-ph/"):
        assert Client().get(page).status_code == 200, page


def assert_routed_to_paper(arxiv_id: str) -> None:
    # reverse() percent-encodes; a request's path reaches the resolver decoded.
    match = resolve(unquote(reverse("papers:paper", args=[arxiv_id])))
    assert (match.view_name, match.kwargs) == ("papers:paper", {"arxiv_id": arxiv_id})


# What the site makes itself -------------------------------------------------------------------


@pytest.mark.django_db
def test_every_seeded_category_passes_the_admins_checks():
    seeded = Category.objects.all()  # what papers/migrations/0002_cs_categories.py made
    assert {category.code for category in seeded} >= set(CS_CATEGORIES)
    assert {category.archive_code for category in seeded} == {COMPUTER_SCIENCE[0]}
    for category in seeded:
        # A curator who opens a seeded category and saves it must not be told it is wrong.
        category.full_clean()
        reverse("papers:archive", args=[category.archive_code])


@pytest.mark.parametrize(
    "code", ["cs.DC", "math.GT", "astro-ph", "astro-ph.CO", "q-bio.NC", "cond-mat.stat-mech"]
)
def test_category_codes_across_arxiv_pass(code):
    validate_category_code(code)
    validate_archive_code(code.split(".")[0])
    assert resolve(reverse("papers:category", args=[code])).kwargs == {"code": code}


@pytest.mark.parametrize("feed", FEEDS, ids=lambda path: path.name)
def test_every_id_in_the_sample_and_test_feeds_passes(feed):
    for entry in parse_feed(feed.read_bytes()).entries:
        validate_arxiv_id(entry.arxiv_id)
        assert_routed_to_paper(entry.arxiv_id)


@given(arxiv_id=st.from_regex(ARXIV_ID, fullmatch=True), version=st.integers(1, 99))
def test_every_id_the_ingest_reads_validates_and_has_a_page(arxiv_id, version):
    # The ingest also reads odd spellings (any case, other scripts' digits): whatever it stores
    # must pass the admin's check, or the curator could not save that paper again, and must
    # have an address, or the pages listing it would fail.
    assert split_id(f"oai:arXiv.org:{arxiv_id}v{version}") == (arxiv_id, version)
    validate_arxiv_id(arxiv_id)
    assert_routed_to_paper(arxiv_id)


@pytest.mark.parametrize("arxiv_id", BAD_ARXIV_IDS + ["", "2611.01234\n"])
def test_ids_without_a_page_are_refused_with_an_example(arxiv_id):
    with pytest.raises(ValidationError) as refusal:
        validate_arxiv_id(arxiv_id)
    assert refusal.value.messages == [ARXIV_ID_MESSAGE]
