"""A small least-recently-used store for one process, bounded by the size of what it holds."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class SizedLRU(Generic[T]):
    """Entries by key, dropping the least recently used once their sizes (as told by ``put``,
    e.g. characters of HTML) pass the budget: one hostile abstract of megabytes must not pin
    thousands of copies."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self.entries: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Hashable) -> T | None:
        with self.lock:
            found = self.entries.get(key)
            if found is None:
                return None
            self.entries.move_to_end(key)
            return found[0]

    def put(self, key: Hashable, value: T, size: int) -> None:
        with self.lock:
            old = self.entries.pop(key, None)
            if old is not None:
                self.held -= old[1]
            self.entries[key] = (value, size)
            self.held += size
            while self.held > self.budget and self.entries:
                self.held -= self.entries.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.held = 0
