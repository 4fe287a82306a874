from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from authorship.models import Claim
from authorship.verified import verified_author_ids
from tests.factories import make_paper

pytestmark = pytest.mark.django_db


def test_one_standing_claim_per_reader_and_paper_but_the_record_is_kept(reader):
    paper = make_paper()
    refused = Claim.objects.create(user=reader, paper=paper, status=Claim.Status.REFUSED)
    withdrawn = Claim.objects.create(user=reader, paper=paper, status=Claim.Status.WITHDRAWN)
    Claim.objects.create(user=reader, paper=paper)
    with pytest.raises(IntegrityError), transaction.atomic():
        Claim.objects.create(user=reader, paper=paper, status=Claim.Status.APPROVED)
    assert set(Claim.objects.filter(paper=paper)) >= {refused, withdrawn}


def test_verified_authors_are_the_approved_claims_only(reader, trader, rival):
    first, second, unclaimed = make_paper(), make_paper(), make_paper()
    Claim.objects.create(user=reader, paper=first, status=Claim.Status.APPROVED)
    Claim.objects.create(user=trader, paper=first, status=Claim.Status.APPROVED)
    Claim.objects.create(user=rival, paper=first)
    Claim.objects.create(user=rival, paper=second, status=Claim.Status.REFUSED)
    found = verified_author_ids(paper_ids=[first.pk, second.pk, unclaimed.pk])
    assert found == {first.pk: {reader.pk, trader.pk}}
    assert list(Claim.objects.verified().filter(paper=first).order_by("user_id")) == list(
        Claim.objects.filter(paper=first, status="approved").order_by("user_id")
    )
