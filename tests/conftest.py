"""Shared fixtures: the database check and the people who use the site.

Personas:
- ``reader``: a signed-in reader who browses and watches categories.
- ``trader``: a signed-in user who trades words (a second active user, ``rival``, competes).
- ``curator``: a staff superuser working in the Django admin (``staff``: the client, signed in
  as the curator).
"""

from __future__ import annotations

import pytest

PASSWORD = "correct horse battery staple"


@pytest.fixture
def password() -> str:
    return PASSWORD


@pytest.fixture
def reader(django_user_model):
    return django_user_model.objects.create_user("rosalind", "rosalind@example.org", PASSWORD)


@pytest.fixture
def trader(django_user_model):
    return django_user_model.objects.create_user("tobias", "tobias@example.org", PASSWORD)


@pytest.fixture
def rival(django_user_model):
    return django_user_model.objects.create_user("rhea", "rhea@example.org", PASSWORD)


@pytest.fixture
def curator(django_user_model):
    return django_user_model.objects.create_superuser("cora", "cora@example.org", PASSWORD)


@pytest.fixture
def staff(client, curator):
    """The test client, signed in as the curator: for the Django admin's pages."""
    client.force_login(curator)
    return client


@pytest.fixture
def cs_dc(db):
    """The cs.DC category (the data migration makes it; transactional tests flush it away)."""
    from papers.models import Category

    category, _ = Category.objects.get_or_create(
        code="cs.DC",
        defaults={
            "name": "Distributed Computing",
            "archive_code": "cs",
            "archive_name": "Computer Science",
            "ingest_enabled": True,
        },
    )
    return category


@pytest.fixture(autouse=True)
def isolated_cache():
    """Each test starts with an empty cache (rate limits, cached pages, the term matcher)."""
    from django.core.cache import cache

    from peerrevenue.pagecache import forget_generation, local_pages

    cache.clear()
    local_pages.clear()
    forget_generation()
    yield
    cache.clear()
    local_pages.clear()
    forget_generation()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Real hashing is slow by design; the tests check behaviour, not hash strength."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def eager_celery(settings):
    """Tasks run in-process unless a test starts a real worker on the Redis broker."""
    from peerrevenue.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous
