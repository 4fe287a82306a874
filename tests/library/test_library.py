"""A reader's library as they use it: the star on lists, tags, read marks, export."""

from __future__ import annotations

import datetime as dt
import re

import bibtexparser
import pytest
from django.utils import timezone

from library.models import SavedPaper, Tag
from tests.factories import list_paper, make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


@pytest.fixture
def listed(cs_dc):
    today = timezone.localdate()
    papers = [
        make_paper(title=f"Consensus number {n}", abstract="Consensus in networks.")
        for n in range(3)
    ]
    for paper in papers:
        list_paper(paper, category=cs_dc, date=today - dt.timedelta(days=1))
    return papers


def star_form(html: str, arxiv_id: str) -> str:
    found = re.search(
        rf'<form class="star" method="post" action="/abs/{arxiv_id}/save/">.*?</form>', html
    )
    assert found, f"no star for {arxiv_id}"
    return found.group(0)


def test_save_from_a_list_page_without_javascript(client, reader, listed):
    client.force_login(reader)
    page = client.get("/list/cs.DC/").content.decode()
    form = star_form(page, listed[0].arxiv_id)
    assert "☆ Save" in form and 'name="csrfmiddlewaretoken"' in form
    response = client.post(
        f"/abs/{listed[0].arxiv_id}/save/", {"next": "/list/cs.DC/", "action": "save"}
    )
    assert response.status_code == 303 and response["Location"] == "/list/cs.DC/"
    page = client.get("/list/cs.DC/").content.decode()
    assert "★ Saved" in star_form(page, listed[0].arxiv_id)
    assert "1 save" in star_form(page, listed[0].arxiv_id)
    assert "☆ Save" in star_form(page, listed[1].arxiv_id)
    library = client.get("/library/").content.decode()
    assert listed[0].title in library and listed[1].title not in library


def test_the_kept_list_shows_each_reader_their_own_stars(client, reader, rival, listed):
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/save/", {"action": "save"})
    client.force_login(rival)
    page = client.get("/list/cs.DC/").content.decode()
    assert "☆ Save" in star_form(page, listed[0].arxiv_id)  # not reader's star
    assert "1 save" in star_form(page, listed[0].arxiv_id)  # but the public count
    client.logout()
    anonymous = client.get("/list/cs.DC/").content.decode()
    assert "Sign in to save papers" in anonymous and "csrfmiddlewaretoken" not in anonymous


def test_next_must_be_on_this_site(client, reader, listed):
    client.force_login(reader)
    paper = listed[0]
    response = client.post(f"/abs/{paper.arxiv_id}/save/", {"next": "https://evil.example/"})
    assert response.status_code == 303 and response["Location"] == paper.get_absolute_url()


def test_signing_in_to_save_comes_back(client, listed):
    response = client.post(f"/abs/{listed[0].arxiv_id}/save/", {"next": "/list/cs.DC/"})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert SavedPaper.objects.count() == 0


def test_a_reader_sees_only_their_own_library(client, reader, rival, listed):
    client.force_login(rival)
    client.post(f"/abs/{listed[2].arxiv_id}/tags/", {"tags": "secret project"}, follow=True)
    rival_tag = Tag.objects.get(user=rival)
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/tags/", {"tags": "serving"}, follow=True)
    page = client.get("/library/").content.decode()
    assert listed[0].title in page and listed[2].title not in page
    assert "secret project" not in page
    assert client.get(f"/library/?tag={rival_tag.pk}").status_code == 404
    assert client.get(f"/library/export.bib?tag={rival_tag.pk}").status_code == 404
    assert listed[2].arxiv_id not in client.get("/library/export.txt").content.decode()
    assert client.post("/library/tags/delete/", {"tag": rival_tag.pk}).status_code == 404
    renamed = client.post("/library/tags/rename/", {"tag": rival_tag.pk, "name": "x"})
    assert renamed.status_code == 404
    assert Tag.objects.get(pk=rival_tag.pk).name == "secret project"


def test_tags_rename_delete_and_a_paper_in_several(client, reader, listed):
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/tags/", {"tags": "serving, Consensus"})
    client.post(f"/abs/{listed[1].arxiv_id}/tags/", {"tags": "consensus"})  # same tag, any case
    tags = {t.name: t for t in Tag.objects.filter(user=reader)}
    assert set(tags) == {"serving", "Consensus"}
    page = client.get(f"/library/?tag={tags['Consensus'].pk}").content.decode()
    assert listed[0].title in page and listed[1].title in page
    client.post("/library/tags/rename/", {"tag": tags["serving"].pk, "name": "inference"})
    assert Tag.objects.get(pk=tags["serving"].pk).name == "inference"
    client.post("/library/tags/delete/", {"tag": tags["Consensus"].pk})
    assert not Tag.objects.filter(pk=tags["Consensus"].pk).exists()
    assert SavedPaper.objects.filter(user=reader).count() == 2  # the papers stay


def test_tags_come_back_in_the_order_typed_and_the_change_is_confirmed(client, reader, listed):
    client.force_login(reader)
    paper = listed[0]
    response = client.post(
        f"/abs/{paper.arxiv_id}/tags/", {"tags": "to read, Consensus, agreement"}, follow=True
    )
    assert "Tags saved: to read, Consensus, agreement." in page_text(response)
    entry = Page.of(client.get("/library/")).one("li", id=paper.arxiv_id)
    assert entry.one("input", name="tags").attrs["value"] == "to read, Consensus, agreement"
    # Reordered by the reader, kept as they put it; emptied, said so.
    client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "agreement, to read"})
    entry = Page.of(client.get("/library/")).one("li", id=paper.arxiv_id)
    assert entry.one("input", name="tags").attrs["value"] == "agreement, to read"
    response = client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": " , "}, follow=True)
    assert "Tags removed: the paper stays in your library." in page_text(response)


@pytest.mark.parametrize(
    "name, message",
    [
        ("x" * 5000, "at most 60 characters"),
        ("bad\u200bname", "control or invisible characters"),
        ("a\x00b", "control or invisible characters"),
        ("   ", "Give the tag a name"),
    ],
)
def test_hostile_tag_names_are_refused_with_a_message(client, reader, listed, name, message):
    client.force_login(reader)
    response = client.post("/library/tags/", {"name": name}, follow=True)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert not Tag.objects.filter(user=reader).exists()


def test_html_in_a_tag_name_is_shown_escaped(client, reader, listed):
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/tags/", {"tags": "<script>alert(1)</script>"})
    page = client.get("/library/").content.decode()
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_read_marks(client, reader, listed):
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/save/", {"action": "save"})
    client.post(f"/abs/{listed[1].arxiv_id}/save/", {"action": "save"})
    client.post(f"/abs/{listed[0].arxiv_id}/read/", {"read": "1"})
    unread = client.get("/library/?unread=1").content.decode()
    assert listed[1].title in unread and listed[0].title not in unread
    client.post(f"/abs/{listed[0].arxiv_id}/read/", {"read": "0"})
    assert listed[0].title in client.get("/library/?unread=1").content.decode()


def test_bibtex_export_parses(client, reader, cs_dc):
    client.force_login(reader)
    hostile = make_paper(
        title=r"Braces {unbalanced and 100% of #hash & $x_1$ \emph{em}",
        authors=['Kurt G\\"odel', "Ada } Lovelace"],
    )
    plain = make_paper(title="Plain title", authors=["A. Turing"])
    for paper in (hostile, plain):
        client.post(f"/abs/{paper.arxiv_id}/tags/", {"tags": "logic"})
    response = client.get("/library/export.bib")
    assert response["Content-Type"].startswith("text/x-bibtex")
    library = bibtexparser.parse_string(response.content.decode())
    assert not library.failed_blocks
    entries = {entry.key: entry for entry in library.entries}
    assert set(entries) == {hostile.arxiv_id, plain.arxiv_id}
    fields = entries[plain.arxiv_id].fields_dict
    assert fields["title"].value == "Plain title"
    assert fields["eprint"].value == plain.arxiv_id
    assert fields["primaryClass"].value == "cs.DC"
    assert fields["author"].value == "A. Turing"
    ids = client.get("/library/export.txt").content.decode().split()
    assert sorted(ids) == sorted([hostile.arxiv_id, plain.arxiv_id])


def test_bibtex_export_gives_one_doi_and_the_others_in_a_note(client, reader, cs_dc):
    client.force_login(reader)
    twice = make_paper(title="Published twice")
    twice.doi = "10.1364/X.23.002578 10.1364/X.32.002407"
    twice.save()
    once = make_paper(title="Published once")
    once.doi = "10.1145/1234567.7654321"
    once.save()
    for paper in (twice, once):
        client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"})
    library = bibtexparser.parse_string(client.get("/library/export.bib").content.decode())
    entries = {entry.key: entry.fields_dict for entry in library.entries}
    assert entries[twice.arxiv_id]["doi"].value == "10.1364/X.23.002578"
    assert entries[twice.arxiv_id]["note"].value == "Also DOI 10.1364/X.32.002407"
    assert entries[once.arxiv_id]["doi"].value == "10.1145/1234567.7654321"
    assert "note" not in entries[once.arxiv_id]


def test_a_hidden_paper_leaves_the_library_and_its_export(client, reader, listed):
    client.force_login(reader)
    client.post(f"/abs/{listed[0].arxiv_id}/save/", {"action": "save"})
    listed[0].hidden = True
    listed[0].save()
    assert listed[0].title not in client.get("/library/").content.decode()
    assert listed[0].arxiv_id not in client.get("/library/export.txt").content.decode()


def test_saving_is_rate_limited(client, reader, listed, settings):
    settings.RATELIMIT_SAVES_PER_WINDOW = 3
    client.force_login(reader)
    codes = [
        client.post(f"/abs/{listed[0].arxiv_id}/save/", {"action": "save"}).status_code
        for _ in range(4)
    ]
    assert codes == [303, 303, 303, 429]
