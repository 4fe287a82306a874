"""Shared fixtures: the database check and the people who use the site.

Personas:
- ``reader``: a signed-in reader who browses and watches categories.
- ``trader``: a signed-in user who trades words (a second active user, ``rival``, competes).
- ``curator``: a staff superuser working in the Django admin (``staff``: the client, signed in
  as the curator).
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

PASSWORD = "correct horse battery staple"

# Servers the tests start read their own writes at once too (peerrevenue.microcache), unless a
# test asks for the second-long anonymous page cache (tests/test_microcache.py).
os.environ.setdefault("MICROCACHE_SECONDS", "0")


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


@pytest.fixture
def kv_cache(db):
    """The term "KV cache" at the default curve: the one most tests trade (the market's,
    the trader pages' and the access tests')."""
    from market.models import Term

    return Term.objects.create(phrase="KV cache")


@pytest.fixture(scope="session", autouse=True)
def worker_cache():
    """Under pytest-xdist, worker ``gwN`` uses Redis db N places after the configured one.

    ``cache.clear()`` on Redis flushes the whole db, so a key prefix alone would let one worker
    wipe another's rate limits and cached pages mid-test. (pytest-django already gives each
    worker its own test database.) Settings load before any conftest, hence an override here.
    """
    from django.conf import settings
    from django.test import override_settings

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    default = settings.CACHES["default"]
    if not worker or not default["BACKEND"].endswith("RedisCache"):
        yield
        return
    url = urlsplit(default["LOCATION"])
    db = int(url.path.strip("/") or 0) + int(worker.removeprefix("gw"))
    location = url._replace(path=f"/{db}").geturl()
    with override_settings(
        CACHES={"default": default | {"LOCATION": location, "KEY_PREFIX": f"test-{worker}"}}
    ):
        yield


@pytest.fixture(autouse=True)
def isolated_cache():
    """Each test starts with an empty cache (rate limits, cached pages, the term matcher)."""
    from django.core.cache import cache

    from api import conditional
    from peerrevenue import keep

    def forget() -> None:
        cache.clear()
        keep.forget_local()
        conditional.forget()

    forget()
    yield
    forget()


@pytest.fixture(autouse=True)
def kept_pieces_proven_fresh(settings):
    """Every kept piece, fill and anonymous page a test uses is checked against a fresh render
    (peerrevenue.keep): any view test that reads a page twice is also a freshness test."""
    settings.KEEP_VERIFY = True


@pytest.fixture(autouse=True)
def pages_read_back_at_once(settings):
    """A test reads its own writes at once: the second-long anonymous page cache
    (peerrevenue.microcache) is off, but in tests/test_microcache.py."""
    settings.MICROCACHE_SECONDS = 0


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
