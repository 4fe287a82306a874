"""Django's Redis cache with one client object per connection pool.

Django builds a new ``redis.Redis`` for every cache call, and building one costs more than a
small GET on loopback (it copies ~170 response callbacks). Clients are thread-safe wrappers
around their pool, so one per pool is enough.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis import ConnectionPool, Redis


class ReusedClientRedisCacheClient(RedisCacheClient):
    if TYPE_CHECKING:
        # Django's own (private) parts this builds on, which django-stubs leaves out.
        _client: type[Redis]

        def _get_connection_pool_index(self, write: bool) -> int: ...
        def _get_connection_pool(self, write: bool) -> ConnectionPool: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Redis] = {}

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


class ReusedClientRedisCache(RedisCache):
    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClientRedisCacheClient
