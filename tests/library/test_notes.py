"""A reader's private note on a paper: only theirs to see, exported with their library."""

from __future__ import annotations

import bibtexparser
import pytest

from library import saves as shelf
from library.models import Note
from tests.factories import make_paper
from tests.html import Page, page_text

pytestmark = pytest.mark.django_db


def test_a_note_is_shown_only_to_its_reader_and_exported(client, reader, rival):
    paper = make_paper(title="Raft revisited")
    url = paper.get_absolute_url()
    client.force_login(reader)
    note = Page.of(client.get(url)).one("section", id="note")
    assert note.one("textarea").text == ""
    response = client.post(f"/abs/{paper.arxiv_id}/note/", {"text": "Check lemma 3 {proof}"})
    assert response.status_code == 303 and response["Location"] == f"{url}#note"
    assert Page.of(client.get(url)).one("textarea", id="note-text").text == "Check lemma 3 {proof}"
    shelf.save(user=reader, paper=paper)
    exported = bibtexparser.parse_string(client.get("/library/export.bib").content.decode())
    assert exported.entries[0].fields_dict["note"].value == "Check lemma 3 \\{proof\\}"
    client.force_login(rival)
    assert "Check lemma 3" not in page_text(client.get(url))
    exported = client.get("/library/export.bib").content.decode()
    assert "lemma" not in exported
    client.logout()
    assert "Check lemma 3" not in client.get(url).content.decode()
    assert not Page.of(client.get(url)).select("section", id="note")


def test_an_empty_note_removes_it_and_a_huge_one_is_refused(client, reader):
    paper = make_paper()
    client.force_login(reader)
    client.post(f"/abs/{paper.arxiv_id}/note/", {"text": "keep"})
    response = client.post(f"/abs/{paper.arxiv_id}/note/", {"text": "x" * 5001}, follow=True)
    assert "at most 5,000 characters" in page_text(response)
    assert Note.objects.get().text == "keep"
    client.post(f"/abs/{paper.arxiv_id}/note/", {"text": "  "})
    assert not Note.objects.exists()
