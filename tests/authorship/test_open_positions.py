"""Positions in the open: a term page lists its verified authors' holdings of the term and
their trades in it within a week before they submitted a paper that mentions it."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from accounts.models import Preferences
from authorship.models import Claim
from market.models import Term
from papers.models import Paper
from tests.factories import announce, buy
from tests.html import Page

pytestmark = pytest.mark.django_db


@pytest.fixture
def gpu_paper(cs_dc):
    gpu = Term.objects.create(phrase="GPU")
    paper = announce(gpu, date=timezone.localdate(), category=cs_dc, title="Consensus on GPUs")
    submitted = timezone.now() - dt.timedelta(days=1)
    Paper.objects.filter(pk=paper.pk).update(submitted_at=submitted)
    return gpu, paper, submitted


def section(client, term: Term) -> str:
    page = Page.of(client.get(term.get_absolute_url()))
    found = page.select("section", cls="open-positions")
    return found[0].text if found else ""


def test_an_authors_holding_and_trades_before_submission_are_listed(
    client, reader, rival, gpu_paper
):
    gpu, paper, submitted = gpu_paper
    buy(reader, gpu, 4, when=submitted - dt.timedelta(days=10))  # long before: not listed
    buy(reader, gpu, 2, when=submitted - dt.timedelta(days=3))  # the week before: listed
    buy(rival, gpu, 50)  # not an author
    assert section(client, gpu) == ""  # no verified author yet
    Claim.objects.create(user=reader, paper=paper, status=Claim.Status.APPROVED)
    text = section(client, gpu)
    assert "rosalind holds 6 shares; author of arXiv:" + paper.arxiv_id in text
    assert text.count("Bought") == 1
    assert "Bought 2 on" in text and f"before submitting arXiv:{paper.arxiv_id}" in text
    assert "rhea" not in text


def test_a_private_author_is_not_named_and_a_withdrawal_clears_the_section(
    client, reader, gpu_paper
):
    gpu, paper, submitted = gpu_paper
    buy(reader, gpu, 2, when=submitted - dt.timedelta(days=2))
    claim = Claim.objects.create(user=reader, paper=paper, status=Claim.Status.APPROVED)
    assert "rosalind holds 2 shares" in section(client, gpu)
    Preferences.objects.create(user=reader, public_trader_page=False)
    text = section(client, gpu)
    assert "a trader holds 2 shares" in text and "rosalind" not in text
    claim.status = Claim.Status.WITHDRAWN
    claim.save()
    assert section(client, gpu) == ""


def test_a_verified_author_of_another_paper_holding_the_term_is_listed(
    client, reader, cs_dc, gpu_paper
):
    gpu, _, _ = gpu_paper
    Claim.objects.create(
        user=reader,
        paper=announce(None, date=timezone.localdate(), category=cs_dc, title="Unrelated"),
        status=Claim.Status.APPROVED,
    )
    buy(reader, gpu, 3)
    assert "rosalind holds 3 shares." in section(client, gpu)
