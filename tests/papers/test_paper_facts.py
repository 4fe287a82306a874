"""The paper page shows what arXiv's abstract page shows, filled from the API (here, the
sample's own API answer, read offline)."""

from __future__ import annotations

import datetime as dt

from django.core.management import call_command

from papers.models import Listing, Paper
from tests.html import page_text


def test_the_sample_papers_carry_arxivs_facts(client, cs_dc, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_sample", "--no-demo", verbosity=0)
    revised = Paper.objects.get(arxiv_id="2611.18011")
    # The sample's 24 November is listed on a recent listing day, and its papers' dates with it.
    listed = Listing.objects.filter(paper=revised).earliest("date").date
    shift = listed - dt.date(2026, 11, 24)

    def day(date: dt.date, format: str) -> str:
        return (date + shift).strftime(format)

    text = page_text(client.get(revised.get_absolute_url()))
    assert (
        f"Submitted on {day(dt.date(2026, 11, 16), '%-d %B %Y')} (v1), "
        f"last revised {day(dt.date(2026, 11, 24), '%-d %B %Y')} (this version, v2)" in text
    )
    assert "Comments 21 pages, 9 figures" in text
    assert "Subjects Machine Learning (cs.LG); Distributed Computing (cs.DC)" in text
    assert "Licence CC BY 4.0" in text
    assert f"v1 {day(dt.date(2026, 11, 16), '%a, %-d %b %Y')} 19:32 UTC" in text
    assert f"v2 {day(dt.date(2026, 11, 24), '%a, %-d %b %Y')} 06:33 UTC (this version)" in text
    assert f"{listed:%A %-d %B %Y} in cs.DC: cross-list (v1)" in text
    with_doi = Paper.objects.exclude(doi="").first()
    assert with_doi is not None and with_doi.journal_ref
    html = client.get(with_doi.get_absolute_url()).content.decode()
    assert f'href="https://doi.org/{with_doi.doi}"' in html
