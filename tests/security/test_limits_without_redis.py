"""The limits that guard accounts (sign-in guesses, sign-ups, reset mails) hold while Redis is
unreachable: counted in PostgreSQL meanwhile, so every worker shares the count. The limits
that only slow a script down open instead (tests/test_cache_outage.py). A private
redis-server of the test's own is stopped; the machine's is never touched."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core import mail

from accounts.attempts import AttemptCount
from peerrevenue.cache import ReusedClientRedisCache
from tests.conftest import PASSWORD
from tests.processes import (
    HttpsClient,
    PrivateRedis,
    can_sign_in_to_a_server,
    collect_static,
    database_url,
    production_environment,
    serving,
)

pytestmark = pytest.mark.slow

WRONG = {"password": "not the password"}


def worker_cache(server: PrivateRedis) -> ReusedClientRedisCache:
    """What one web worker has: its own client, with its own view of the outage."""
    return ReusedClientRedisCache(server.url, {"KEY_PREFIX": "limits-test"})


@pytest.fixture
def redis_gone(monkeypatch):
    """Redis that answered, then died, with attempts answered by two workers in turn."""
    server = PrivateRedis()
    server.start()
    assert worker_cache(server).add("up", 1) is True
    server.stop()

    class TwoWorkers:
        """Each attempt (a rate limit starts with add()) goes to the other worker."""

        def __init__(self) -> None:
            self.workers = [worker_cache(server), worker_cache(server)]
            self.turn = 0

        def add(self, *args, **kwargs):
            self.turn += 1
            return self.workers[self.turn % 2].add(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.workers[self.turn % 2], name)

    monkeypatch.setattr("peerrevenue.ratelimit.cache", TwoWorkers())
    yield server


@pytest.mark.django_db
def test_wrong_passwords_meet_the_limit_without_redis(client, reader, redis_gone, settings):
    login = {"username": reader.username, **WRONG}
    statuses = [client.post("/accounts/login/", login).status_code for _ in range(15)]
    limit = settings.RATELIMIT_LOGIN_PER_WINDOW
    assert statuses == [200] * limit + [429] * (15 - limit)
    right = client.post("/accounts/login/", {"username": reader.username, "password": PASSWORD})
    assert right.status_code == 429 and "Too many attempts from your address" in right.text
    assert client.get("/portfolio/").status_code == 302  # not signed in


@pytest.mark.django_db
def test_sign_ups_and_reset_mails_meet_their_limits_without_redis(
    client, reader, redis_gone, settings
):
    signups = [
        client.post("/accounts/signup/", {"username": f"new{n}"}).status_code for n in range(8)
    ]
    assert signups.count(429) == 8 - settings.RATELIMIT_SIGNUP_PER_WINDOW
    for n in range(6):  # from many addresses, to one inbox
        client.post("/accounts/password_reset/", {"email": reader.email}, REMOTE_ADDR=f"10.0.0.{n}")
    assert len(mail.outbox) == settings.RATELIMIT_PASSWORD_RESETS_PER_EMAIL


@pytest.mark.django_db
def test_counts_of_past_windows_are_cleared_as_new_ones_are_counted(client, reader, redis_gone):
    AttemptCount.objects.create(
        key="ratelimit:login:10.9.9.9:1", count=99, expires_at="2026-01-01T00:00Z"
    )
    client.post("/accounts/login/", {"username": reader.username, **WRONG})
    assert list(AttemptCount.objects.values_list("count", flat=True)) == [1]


@pytest.mark.django_db(transaction=True)
def test_two_gunicorn_workers_share_the_limit_while_redis_is_stopped(reader, settings, tmp_path):
    collect_static()
    can_sign_in_to_a_server(settings, PASSWORD, reader)
    cache_server = PrivateRedis()
    cache_server.start()
    log = tmp_path / "access.log"
    env = production_environment(database_url=database_url(), REDIS_URL=cache_server.url)
    try:
        with serving(env=env, workers=2, log=log, output=tmp_path / "out.log") as base:
            cache_server.stop()
            clients = []
            for _ in range(15):
                client = HttpsClient(base)  # a connection of its own: any worker may answer
                client.get("/accounts/login/")
                clients.append(client)

            def attempt(client: HttpsClient) -> int:
                return client.post(
                    "/accounts/login/", {"username": reader.username, **WRONG}
                ).status_code

            # Three at a time: one after the other, one sync worker can win every accept, and
            # the test is about the count the two workers share.
            with ThreadPoolExecutor(max_workers=3) as pool:
                statuses = list(pool.map(attempt, clients))
    finally:
        cache_server.stop()
    limit = settings.RATELIMIT_LOGIN_PER_WINDOW
    assert (statuses.count(200), statuses.count(429)) == (limit, 15 - limit), (
        tmp_path / "out.log"
    ).read_text()[-2000:]
    posts = [
        line.split()[0] for line in log.read_text().splitlines() if "POST /accounts/login/" in line
    ]
    assert len(set(posts)) == 2, "both workers answered some of the attempts"
