"""The paper page shows what arXiv's abstract page shows, filled from the API (here, the
sample's own API answer, read offline)."""

from __future__ import annotations

from django.core.management import call_command

from papers.models import Paper
from tests.html import page_text


def test_the_sample_papers_carry_arxivs_facts(client, cs_dc, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", "--no-demo", verbosity=0)
    revised = Paper.objects.get(arxiv_id="2611.18011")
    text = page_text(client.get(revised.get_absolute_url()))
    assert (
        "Submitted on 16 November 2026 (v1), last revised 24 November 2026 (this version, v2)"
        in text
    )
    assert "Comments 21 pages, 9 figures" in text
    assert "Subjects Machine Learning (cs.LG); Distributed Computing (cs.DC)" in text
    assert "Licence CC BY 4.0" in text
    assert (
        "v1 Mon, 16 Nov 2026 19:32 UTC" in text
        and "v2 Tue, 24 Nov 2026 06:33 UTC (this version)" in text
    )
    assert "Tuesday 24 November 2026 in cs.DC: cross-list (v1)" in text
    with_doi = Paper.objects.exclude(doi="").first()
    assert with_doi is not None and with_doi.journal_ref
    html = client.get(with_doi.get_absolute_url()).content.decode()
    assert f'href="https://doi.org/{with_doi.doi}"' in html
