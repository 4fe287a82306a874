"""Claims are rate-limited per reader and per inbox (each may mail a link), and the limits hold
while Redis is unreachable: counted in PostgreSQL meanwhile, like the sign-in limit."""

from __future__ import annotations

import pytest
from django.core import mail

from authorship.models import Claim
from peerrevenue.cache import ReusedClientRedisCache
from tests.factories import make_paper
from tests.processes import PrivateRedis

pytestmark = pytest.mark.django_db

ORCID = "0000-0002-1825-0097"


def claim_each(client, papers, **evidence) -> list[int]:
    return [
        client.post(
            "/claims/new/",
            {"paper": [paper.arxiv_id], "orcid": ORCID, "note": "", "institution_email": ""}
            | evidence,
        ).status_code
        for paper in papers
    ]


def test_past_the_limit_a_reader_is_told_to_wait_and_nothing_is_claimed(client, reader, settings):
    settings.RATELIMIT_CLAIMS_PER_WINDOW = 3
    papers = [make_paper() for _ in range(5)]
    client.force_login(reader)
    assert claim_each(client, papers) == [302, 302, 302, 429, 429]
    assert Claim.objects.count() == 3
    refused = client.post("/claims/withdraw/", {"claim": Claim.objects.earliest("id").pk})
    assert refused.status_code == 429 and "Nothing was changed" in refused.text
    assert not Claim.objects.filter(status="withdrawn").exists()


def test_many_readers_cannot_flood_one_inbox(client, django_user_model, settings):
    settings.RATELIMIT_CLAIM_MAILS_PER_EMAIL = 2
    paper = make_paper()
    for number in range(4):
        client.force_login(django_user_model.objects.create_user(f"reader{number}"))
        claim_each(client, [paper], institution_email="dean@uni.example")
    assert len(mail.outbox) == 2
    assert Claim.objects.count() == 2


@pytest.fixture
def redis_gone(monkeypatch):
    """Redis that answered, then died."""
    server = PrivateRedis()
    server.start()
    cache = ReusedClientRedisCache(server.url, {"KEY_PREFIX": "claim-limits-test"})
    assert cache.add("up", 1) is True
    server.stop()
    monkeypatch.setattr("peerrevenue.ratelimit.cache", cache)
    yield server


@pytest.mark.slow
def test_the_limit_holds_while_redis_is_down(client, reader, settings, redis_gone):
    settings.RATELIMIT_CLAIMS_PER_WINDOW = 3
    papers = [make_paper() for _ in range(5)]
    client.force_login(reader)
    assert claim_each(client, papers) == [302, 302, 302, 429, 429]
    assert Claim.objects.count() == 3
