"""Typesetting belongs to the paper: whatever changes its TeX re-renders it, at once."""

from __future__ import annotations

import datetime as dt
import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from papers.models import Paper
from papers.typesetting import TYPESETTER_VERSION
from tests.factories import list_paper, make_paper
from tests.html import Page

pytestmark = [
    pytest.mark.django_db,
    # The paper admin's licence URLField, about Django 6's default scheme: not ours to test.
    pytest.mark.filterwarnings("ignore:The default scheme will be changed"),
]

FRIDAY = dt.date(2026, 10, 2)


def test_a_curators_edit_shows_typeset_on_the_paper_page_and_the_listing(staff, cs_dc):
    paper = make_paper(
        title="Gossip in $O(n)$ rounds",
        abstract="We study gossip.",
        authors=["Ada Lovelace"],
    )
    list_paper(paper, category=cs_dc, date=FRIDAY)
    visitor = Client()
    pages = [f"/abs/{paper.arxiv_id}/", "/list/cs.DC/"]
    for page in pages:  # seen (and cached) before the edit
        assert "Gossip in" in visitor.get(page).content.decode()

    url = reverse("admin:papers_paper_change", args=[paper.pk])
    data = Page.of(staff.get(url)).form("paper_form")
    data["title"] = r"Rumour spreading in $\Theta(\log n)$ rounds"
    data["abstract"] = r"We prove $\alpha$-bounds for Erd\H{o}s graphs, and \emph{tight} ones."
    # A curator fixing a name writes its TeX and leaves the rendered name alone.
    data["authors"] = json.dumps([{"name": r"Paul Erd\H{o}s", "affiliation": "Budapest"}])
    assert staff.post(url, data).status_code == 302

    for page in pages:
        html = visitor.get(page).content.decode()
        assert "Gossip in" not in html and "Ada Lovelace" not in html, page
        assert "Rumour spreading in <math alttext=" in html, page
        assert "Paul Erdős" in html, page
        assert "<em>tight</em>" in html and "Erdős graphs" in html, page
    assert "Rumour spreading in Θ(log n) rounds ·" in visitor.get(pages[0]).content.decode()


def test_saving_a_paper_renders_only_when_its_tex_changed():
    paper = Paper.objects.create(arxiv_id="2610.00001", title=r"Fast \emph{gossip}")
    assert paper.title_html == "Fast <em>gossip</em>"
    assert paper.typesetter_version == TYPESETTER_VERSION

    paper = Paper.objects.get(pk=paper.pk)
    paper.title_html = "kept: nothing it is made from changed"
    paper.hidden = True
    paper.save()
    assert Paper.objects.get(pk=paper.pk).title_html == "kept: nothing it is made from changed"

    paper.authors = [{"name": r"J\"urgen M\"uller", "affiliation": ""}]
    paper.save(update_fields=["authors"])
    stored = Paper.objects.get(pk=paper.pk)
    assert stored.authors_text == "Jürgen Müller"
    assert stored.authors[0]["name_text"] == "Jürgen Müller"
    assert stored.title_html == "Fast <em>gossip</em>"


def test_retypeset_renders_like_saving_does_and_refreshes_cached_pages(cs_dc):
    saved = make_paper(title=r"Erd\H{o}s meets $\alpha$", authors=[r"Fran\c{c}ois"])
    list_paper(saved, category=cs_dc, date=FRIDAY)
    rendered = {f: getattr(saved, f) for f in Paper.TYPESET_FIELDS}
    Paper.objects.filter(pk=saved.pk).update(
        title_html="stale", abstract_html="stale", authors_text="stale", typesetter_version=0
    )
    visitor = Client()
    assert "stale" in visitor.get(f"/abs/{saved.arxiv_id}/").content.decode()  # now cached

    call_command("retypeset", stdout=StringIO())

    stored = Paper.objects.get(pk=saved.pk)
    assert {f: getattr(stored, f) for f in Paper.TYPESET_FIELDS} == rendered
    page = visitor.get(f"/abs/{saved.arxiv_id}/").content.decode()
    assert "stale" not in page and "Erdős meets <math alttext=" in page
