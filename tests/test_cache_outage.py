"""The production cache without Redis: reads miss, writes are skipped, nothing raises or waits,
and once Redis answers again nothing that changed meanwhile comes back stale. A private
redis-server of the test's own is killed, frozen and restarted; the machine's is never touched."""

from __future__ import annotations

import logging
import time

import pytest
from redis import Redis
from redis.client import Pipeline

from peerrevenue import cache as degrading
from peerrevenue.cache import ReusedClientRedisCache
from peerrevenue.ratelimit import is_limited
from tests.processes import PrivateRedis

pytestmark = pytest.mark.slow


@pytest.fixture
def redis_server():
    server = PrivateRedis()
    server.start()
    yield server
    server.stop()  # SIGKILL: frozen or not


@pytest.fixture
def short_backoff(monkeypatch):
    monkeypatch.setattr(degrading, "BACKOFF_SECONDS", 0.2)
    return 0.2


def make_cache(server: PrivateRedis) -> ReusedClientRedisCache:
    return ReusedClientRedisCache(server.url, {"KEY_PREFIX": "outage-test"})


def outage_warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if "unreachable" in r.getMessage()]


def test_without_redis_every_operation_answers_at_once_and_warns_once(
    redis_server, short_backoff, caplog
):
    cache = make_cache(redis_server)
    cache.set("kept", "before")
    assert cache.get("kept") == "before"
    redis_server.stop()

    caplog.set_level(logging.WARNING, logger="peerrevenue.cache")
    started = time.monotonic()
    for _ in range(200):
        assert cache.get("kept") is None
        assert cache.get("kept", "fallback") == "fallback"
        assert cache.get_many(["kept", "other"]) == {}
        assert cache.add("lock", 1) is False
        cache.set("kept", "during")
        cache.set_many({"a": 1, "b": 2})
        cache.delete("kept")
        cache.delete_many(["a", "b"])
        assert cache.has_key("kept") is False
        assert cache.touch("kept") is False
        with pytest.raises(ValueError):
            cache.incr("counter")
    elapsed = time.monotonic() - started
    # 2,200 calls: only the first (and one a back-off period) may try the dead server.
    assert elapsed < 1.5, f"{elapsed:.2f} s"
    assert len(outage_warnings(caplog)) == 1


def test_rate_limits_let_requests_through_while_redis_is_gone(
    redis_server, short_backoff, monkeypatch
):
    cache = make_cache(redis_server)
    monkeypatch.setattr("peerrevenue.ratelimit.cache", cache)
    assert [is_limited("t", "me", limit=2, window_seconds=60) for _ in range(3)] == [
        False,
        False,
        True,
    ]
    redis_server.stop()
    assert not any(is_limited("t", "me", limit=2, window_seconds=60) for _ in range(20))


def test_a_frozen_redis_costs_a_quarter_second_then_nothing(redis_server, short_backoff):
    cache = make_cache(redis_server)
    cache.set("kept", "value")
    redis_server.pause()
    try:
        started = time.monotonic()
        assert cache.get("kept") is None
        first = time.monotonic() - started
        started = time.monotonic()
        for _ in range(100):
            assert cache.get("kept") is None
        rest = time.monotonic() - started
    finally:
        redis_server.resume()
    # One timeout, retried once on a fresh connection: about half a second, never Redis's 5 s.
    assert first < 1.0, f"{first:.2f} s"
    assert rest < 0.5, f"{rest:.2f} s"


def test_comes_back_by_itself_and_forgets_what_it_could_not_change(
    redis_server, short_backoff, caplog
):
    cache = make_cache(redis_server)
    cache.set("pages:generation", "token-before-the-outage", timeout=None)
    cache.set("session", {"signed_in": True})
    cache.set("untouched", "still here")

    # Frozen, not killed: Redis keeps its data, as after a network blip.
    redis_server.pause()
    caplog.set_level(logging.WARNING, logger="peerrevenue.cache")
    try:
        cache.set("pages:generation", "token-after-a-trade", timeout=None)  # skipped
        cache.delete("session")  # a sign-out: skipped
    finally:
        redis_server.resume()
    assert cache.get("untouched") is None  # still backing off: a miss, not a wait

    time.sleep(short_backoff + 0.05)
    # Neither the old token nor the signed-out session may come back: both are gone, so the
    # token is made afresh and the session is read from the database.
    assert cache.get("pages:generation") is None
    assert cache.get("session") is None
    assert cache.get("untouched") == "still here"
    cache.set("kept", "again")
    assert cache.get("kept") == "again"
    messages = [r.getMessage() for r in caplog.records]
    assert sum("unreachable" in m for m in messages) == 1
    assert any("back after" in m and "removed 2 entries" in m for m in messages)


def test_a_restarted_redis_is_used_again_without_restarting_the_site(redis_server, short_backoff):
    cache = make_cache(redis_server)
    cache.set("kept", "before")
    redis_server.stop()
    assert cache.get("kept") is None
    redis_server.start()  # same port, empty
    time.sleep(short_backoff + 0.05)
    assert cache.get("kept") is None
    cache.set("kept", "after")
    assert cache.get("kept") == "after"


def test_a_count_is_one_round_trip_that_expires_with_its_window(redis_server, monkeypatch):
    cache = make_cache(redis_server)
    monkeypatch.setattr("peerrevenue.ratelimit.cache", cache)
    client = Redis.from_url(redis_server.url)
    sent: list[int] = []
    execute = Pipeline.execute

    def counted_execute(pipe, *args, **kwargs):
        sent.append(len(pipe.command_stack))
        return execute(pipe, *args, **kwargs)

    monkeypatch.setattr(Pipeline, "execute", counted_execute)
    assert [is_limited("t", "me", limit=3, window_seconds=60) for _ in range(4)] == [
        False,
        False,
        False,
        True,
    ]
    assert sent == [2, 2, 2, 2]  # each count one pipeline: no add, exists, incr
    (name,) = client.keys("*ratelimit:t:me:*")
    assert 0 < client.ttl(name) <= 61  # the window's count goes with the window
