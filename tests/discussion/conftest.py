"""Discussion fixtures: a paper and a term to talk about, and writers old enough to post
links (a new account may not: discussion.rules)."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from market.models import Term
from tests.factories import make_paper


def settled(user):
    """An account past the new-account limits."""
    user.date_joined = timezone.now() - dt.timedelta(days=30)
    user.save(update_fields=["date_joined"])
    return user


@pytest.fixture
def paper(db):
    return make_paper(title="Consensus with $f < n/3$ faults")


@pytest.fixture
def term(db) -> Term:
    return Term.objects.create(phrase="Byzantine")


@pytest.fixture
def writer(trader):
    return settled(trader)


@pytest.fixture
def other(rival):
    return settled(rival)
