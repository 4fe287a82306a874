"""Tokens in the shared cache that kept things are keyed by (pages, pieces, the term matcher,
the price table): a change replaces its token, and whatever was kept under the old one is
never read again."""

from __future__ import annotations

import uuid

from django.core.cache import cache


def current_token(key: str, *, found: str | None = None) -> str:
    """The token under ``key`` (``found``: already read, e.g. by ``get_many``). If the cache
    lost it (evicted, flushed, never set), a fresh one, which every process then agrees on
    through ``add()`` and which makes everything kept under the lost one unreachable."""
    if found is not None:
        return found
    token = cache.get(key)
    if token is None:
        cache.add(key, uuid.uuid4().hex, timeout=None)
        # Still none: the cache is unreachable. A token nobody else has, so that nothing kept
        # under it (in this process's memory either) is ever found again: slower, never stale.
        token = cache.get(key) or uuid.uuid4().hex
    return token


def replace_token(key: str) -> str:
    """A new token under ``key``: everything kept under the old one is out of date."""
    token = uuid.uuid4().hex
    cache.set(key, token, timeout=None)
    return token
