"""Django's Redis cache, made to behave as a cache: losing Redis makes pages slower, never wrong,
and never turns a request (or a write that has already committed) into an error.

Two things differ from Django's ``RedisCache``:

- One client object per connection pool. Django builds a new ``redis.Redis`` for every cache
  call, and building one costs more than a small GET on loopback (it copies ~170 response
  callbacks). Clients are thread-safe wrappers around their pool, so one per pool is enough.

- Redis being unreachable (refused, reset, timed out) is an outage, not an error: reads are
  misses, writes and deletes are skipped, ``add()`` reports that it added nothing, ``incr()``
  finds no counter, and ``unavailable()`` says so (rate limits that must hold then count in
  PostgreSQL, the others let the request through: peerrevenue.ratelimit). Sockets time out
  after a quarter of a second, and after a failure this process leaves Redis alone for
  ``BACKOFF_SECONDS`` instead of waiting on every call; it logs one warning when an outage
  begins and one line when it ends.

  What a skipped write would have changed must not come back when Redis does: a replaced token
  would still name pages from before the change, a deleted session (a sign-out) would sign its
  owner in again. So each key this process failed to write or delete is remembered, and
  deleted first thing once Redis answers again. A missing key is always safe in a cache: the
  token is made afresh (everything kept under the old one is unreachable), the session is read
  from the database. What stays approximate is this process's death during an outage: its
  unapplied deletes are then lost, as they would be with any cache that dies mid-write.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import ConnectionPool, Redis
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

logger = logging.getLogger(__name__)

T = TypeVar("T")

# What "Redis is not there" looks like. Anything else (a wrong type, a full memory, a bad
# command) is a bug or a misconfiguration and should be seen as one.
UNAVAILABLE = (RedisConnectionError, RedisTimeoutError)

# A cache read must never hold a page for long: a healthy Redis answers in well under a
# millisecond, and a miss costs a render (a few milliseconds), not a timeout.
SOCKET_TIMEOUT_SECONDS = 0.25
# After a failure, skip Redis this long: an outage costs one timeout a second per process,
# not one per cache call.
BACKOFF_SECONDS = 1.0
# At most this many keys a process failed to write are remembered for deletion on recovery. A
# page view writes a few, so this covers minutes of outage at full load; keys past it are
# left to expire, and the recovery says how many there were.
MAX_MISSED_KEYS = 100_000


class _Outage:
    """Whether this process currently sees Redis as gone, and the writes it could not make."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.since: float | None = None  # when the outage began (monotonic); None: Redis is up
        self.retry_at = 0.0
        self.missed: set[str] = set()
        self.missed_overflow = 0
        self.recovering = False

    def failed(self, exc: Exception, *, server: str) -> None:
        with self.lock:
            now = time.monotonic()
            if self.since is None:
                self.since = now
                logger.warning(
                    "Redis cache at %s is unreachable (%s: %s): serving without it, reads are "
                    "misses and writes are skipped; retrying every %.1f s",
                    server,
                    type(exc).__name__,
                    exc,
                    BACKOFF_SECONDS,
                )
            self.retry_at = now + BACKOFF_SECONDS

    def skip(self, keys: Iterable[str]) -> None:
        with self.lock:
            for key in keys:
                if len(self.missed) < MAX_MISSED_KEYS:
                    self.missed.add(key)
                else:
                    self.missed_overflow += 1


class DegradingRedisCacheClient(RedisCacheClient):
    def __init__(self, servers, **options) -> None:
        # Short timeouts. A refused or reset connection is retried once at once, on a fresh
        # connection: a pooled connection goes stale when Redis restarts, and that alone is
        # not an outage. A timeout is not retried: waiting twice on a hung server helps no one.
        options.setdefault("socket_connect_timeout", SOCKET_TIMEOUT_SECONDS)
        options.setdefault("socket_timeout", SOCKET_TIMEOUT_SECONDS)
        options.setdefault("retry", Retry(NoBackoff(), 1, supported_errors=(RedisConnectionError,)))
        super().__init__(servers, **options)
        self._clients: dict[int, Redis] = {}
        self._outage = _Outage()

    if TYPE_CHECKING:
        # Django's own (private) parts this builds on, which django-stubs leaves out.
        _client: type[Redis]
        _servers: list[str]

        def _get_connection_pool_index(self, write: bool) -> int: ...
        def _get_connection_pool(self, write: bool) -> ConnectionPool: ...

    def get_client(
        self, key: str | bytes | memoryview | None = None, *, write: bool = False
    ) -> Redis:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(
                connection_pool=self._get_connection_pool(write)
            )
        return client

    # -- the outage guard ---------------------------------------------------------------------

    def _guarded(self, call: Callable[[], T], *, default: T, writes: Iterable[str] = ()) -> T:
        """``call()``, or ``default`` while Redis is unreachable; ``writes`` are the keys the
        call would change, remembered for deletion if it cannot make them."""
        outage = self._outage
        if outage.since is not None and not self._recovered():
            outage.skip(writes)
            return default
        try:
            return call()
        except UNAVAILABLE as exc:
            outage.failed(exc, server=self._servers[0])
            outage.skip(writes)
            return default

    def _recovered(self) -> bool:
        """Past the back-off, try Redis again: delete what was missed, then it is up."""
        outage = self._outage
        with outage.lock:
            if outage.recovering or time.monotonic() < outage.retry_at:
                return False
            outage.recovering = True
            missed = list(outage.missed)
        try:
            client = self.get_client(None, write=True)
            if missed:
                for start in range(0, len(missed), 1000):
                    client.delete(*missed[start : start + 1000])
            else:
                client.ping()
        except UNAVAILABLE as exc:
            outage.failed(exc, server=self._servers[0])
            with outage.lock:
                outage.recovering = False
            return False
        with outage.lock:
            down_for = time.monotonic() - (outage.since or time.monotonic())
            overflow = outage.missed_overflow
            outage.missed.difference_update(missed)
            outage.since, outage.missed_overflow, outage.recovering = None, 0, False
        logger.warning(
            "Redis cache is back after %.1f s; removed %d entries this process could not "
            "update meanwhile%s",
            down_for,
            len(missed),
            f" ({overflow} more were not tracked and expire on their own)" if overflow else "",
        )
        return True

    @property
    def unavailable(self) -> bool:
        """Whether this process sees Redis as gone (since a call failed, until one succeeds)."""
        return self._outage.since is not None

    # -- Django's cache client operations, guarded --------------------------------------------

    def add(self, key, value, timeout):
        # Not added: whoever relies on add() to claim something (a lock, a fresh token) finds
        # it was not theirs, which is the safe answer.
        return self._guarded(
            lambda: RedisCacheClient.add(self, key, value, timeout), default=False, writes=[key]
        )

    def get(self, key, default):
        return self._guarded(lambda: RedisCacheClient.get(self, key, default), default=default)

    def set(self, key, value, timeout):
        self._guarded(
            lambda: RedisCacheClient.set(self, key, value, timeout), default=None, writes=[key]
        )

    def touch(self, key, timeout):
        return self._guarded(
            lambda: RedisCacheClient.touch(self, key, timeout), default=False, writes=[key]
        )

    def delete(self, key):
        return self._guarded(
            lambda: RedisCacheClient.delete(self, key), default=False, writes=[key]
        )

    def get_many(self, keys):
        nothing: dict[Any, Any] = {}
        return self._guarded(lambda: RedisCacheClient.get_many(self, keys), default=nothing)

    def has_key(self, key):
        return self._guarded(lambda: RedisCacheClient.has_key(self, key), default=False)

    def incr(self, key, delta):
        # Without Redis there is no counter: the same answer as for a key that expired, which
        # callers handle already (a rate limit starts a new count, so it lets the request in).
        found = self._guarded(
            lambda: RedisCacheClient.incr(self, key, delta), default=None, writes=[key]
        )
        if found is None:
            raise ValueError(f"Key '{key}' not found (the Redis cache is unreachable).")
        return found

    def count(self, key: str, timeout: int) -> int | None:
        """One more under ``key``, and the total, in one round trip: the counter is made
        (expiring in ``timeout`` seconds) if missing, then incremented. ``None`` while Redis
        is unreachable. Django's ``add`` then ``incr`` takes three (``incr`` asks whether the
        key exists first), on every API request and every limited write."""

        def counted() -> int:
            pipe = self.get_client(key, write=True).pipeline(transaction=False)
            # SET NX never resets a running count; INCR after it always finds the key.
            pipe.set(key, 0, ex=timeout, nx=True)
            pipe.incr(key)
            return int(pipe.execute()[1])

        return self._guarded(counted, default=None, writes=[key])

    def set_many(self, data, timeout):
        self._guarded(
            lambda: RedisCacheClient.set_many(self, data, timeout), default=None, writes=list(data)
        )

    def delete_many(self, keys):
        self._guarded(
            lambda: RedisCacheClient.delete_many(self, keys), default=None, writes=list(keys)
        )

    def clear(self):
        return self._guarded(lambda: RedisCacheClient.clear(self), default=False)


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = DegradingRedisCacheClient

    def count(self, key: str, timeout: int) -> int | None:
        """See ``DegradingRedisCacheClient.count``: what ``peerrevenue.ratelimit`` counts with."""
        made = self.make_and_validate_key(key)
        return self._cache.count(made, timeout)  # type: ignore[attr-defined]  # Django's, unstubbed

    def unavailable(self) -> bool:
        """Whether Redis is unreachable from this process: what a counter it could not count
        is told from one that expired by (peerrevenue.ratelimit)."""
        # Django's RedisCache keeps its client as ``_cache``, which django-stubs leaves out.
        client = getattr(self, "_cache", None)
        return isinstance(client, DegradingRedisCacheClient) and client.unavailable
