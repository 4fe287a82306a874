"""The paper page's Cite control: the paper's BibTeX, as the library export writes it, to
select or to download, and the download's file."""

from __future__ import annotations

import bibtexparser

from tests.factories import make_paper
from tests.html import Page


def test_the_paper_page_shows_its_bibtex_and_a_download(client, cs_dc):
    paper = make_paper(
        title=r"Braces {unbalanced and 100% of #hash",
        authors=['Kurt G\\"odel', "Ada Lovelace"],
    )
    page = Page.of(client.get(paper.get_absolute_url()))
    cite = page.one("details", cls="cite")
    assert cite.one("summary").text == "Cite (BibTeX)"
    shown = bibtexparser.parse_string(cite.one("pre", cls="cite__bibtex").text)
    assert not shown.failed_blocks
    (entry,) = shown.entries
    assert entry.key == paper.arxiv_id
    assert entry.fields_dict["eprint"].value == paper.arxiv_id
    assert entry.fields_dict["author"].value == "Kurt Gödel and Ada Lovelace"
    download = {text: href for href, text in cite.links()}
    href = download[f"Download {paper.arxiv_id}.bib"]
    response = client.get(href)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/x-bibtex")
    assert response["Content-Disposition"] == f'attachment; filename="{paper.arxiv_id}.bib"'
    # The page and the file say the same, and so does the library's export of the paper.
    # (the page's text is read with its whitespace folded, as a reader sees it)
    assert " ".join(response.content.decode().split()) == cite.one("pre", cls="cite__bibtex").text


def test_the_page_and_the_library_export_give_the_same_entry(client, cs_dc, reader):
    paper = make_paper(title="Shared formatting", authors=["A. Turing"])
    paper.doi = "10.1364/X.23.002578 10.1364/X.32.002407"
    paper.save()
    client.force_login(reader)
    client.post(f"/abs/{paper.arxiv_id}/save/", {"action": "save"})
    exported = client.get("/library/export.bib").content.decode()
    cited = client.get(f"/abs/{paper.arxiv_id}/cite.bib").content.decode()
    assert exported == cited
    assert "note = {Also DOI 10.1364/X.32.002407}" in cited


def test_an_old_style_id_downloads_under_a_file_name_without_a_slash(client, cs_dc):
    paper = make_paper(arxiv_id="cs/0101001", title="Old style")
    response = client.get("/abs/cs/0101001/cite.bib")
    assert response["Content-Disposition"] == 'attachment; filename="cs-0101001.bib"'
    assert response.content.decode().startswith("@misc{cs:0101001,")
    assert paper.title in response.content.decode()


def test_a_hidden_or_unknown_paper_has_no_bibtex(client, cs_dc):
    hidden = make_paper(title="Withdrawn here", hidden=True)
    assert client.get(f"/abs/{hidden.arxiv_id}/cite.bib").status_code == 404
    assert client.get("/abs/2611.99999/cite.bib").status_code == 404


def test_an_edited_title_shows_in_the_kept_page_at_once(client, cs_dc):
    paper = make_paper(title="First title")
    assert "First title" in Page.of(client.get(paper.get_absolute_url())).one("pre").text
    paper.title = "Second title"
    paper.title_html = "Second title"
    paper.save()
    assert "Second title" in Page.of(client.get(paper.get_absolute_url())).one("pre").text
