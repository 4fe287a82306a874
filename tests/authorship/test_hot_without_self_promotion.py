"""/hot/ without self-promotion: a verified author's saves of their own paper and trades in
their own paper's terms count nothing towards it; everyone else's still do."""

from __future__ import annotations

import pytest
from django.utils import timezone

from authorship.models import Claim
from library import hot, saves
from market.models import Term
from tests.factories import announce, buy

pytestmark = pytest.mark.django_db


def counts(period: str = "week") -> dict[int, tuple[int, int]]:
    hot.refresh()
    return {h.paper_id: (h.saves, h.trades) for h in hot.ranking(period=period)}


def test_an_authors_own_saves_and_trades_count_nothing(cs_dc, reader, rival, trader):
    gpu = Term.objects.create(phrase="GPU")
    today = timezone.localdate()
    own = announce(gpu, date=today, category=cs_dc, title="Consensus on GPUs")
    other = announce(gpu, date=today, category=cs_dc, title="Another GPU paper")
    Claim.objects.create(user=reader, paper=own, status=Claim.Status.APPROVED)
    # A pending claim is not yet verified: the rival's own activity still counts.
    Claim.objects.create(user=rival, paper=other)
    saves.save(user=reader, paper=own)
    buy(reader, gpu, 5)
    buy(reader, gpu, 2)
    assert own.pk not in counts()  # the author alone: nothing at all
    # The author's trades in GPU still count for the other paper, which is not theirs.
    assert counts()[other.pk] == (0, 2)
    saves.save(user=trader, paper=own)
    buy(trader, gpu, 1)
    saves.save(user=rival, paper=other)
    found = counts()
    assert found[own.pk] == (1, 1)
    assert found[other.pk] == (1, 3)


def test_a_withdrawn_claim_counts_again(cs_dc, reader):
    gpu = Term.objects.create(phrase="GPU")
    own = announce(gpu, date=timezone.localdate(), category=cs_dc, title="Consensus on GPUs")
    claim = Claim.objects.create(user=reader, paper=own, status=Claim.Status.APPROVED)
    saves.save(user=reader, paper=own)
    buy(reader, gpu, 1)
    assert own.pk not in counts()
    Claim.objects.filter(pk=claim.pk).update(status=Claim.Status.WITHDRAWN)
    assert counts()[own.pk] == (1, 1)
