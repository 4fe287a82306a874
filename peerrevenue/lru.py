"""A process's own store of recent values, bounded by their total size (``SizedLRU``): what
``peerrevenue.keep`` keeps in memory, and the pages of ``peerrevenue.microcache``."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")


class SizedLRU(Generic[T]):
    """This process's entries by key, dropping the least recently used once their sizes pass
    the budget: one hostile abstract of megabytes must not pin thousands of copies."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.held = 0
        self.entries: OrderedDict[Hashable, tuple[T, int]] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, name: Hashable) -> T | None:
        with self.lock:
            found = self.entries.get(name)
            if found is None:
                return None
            self.entries.move_to_end(name)
            return found[0]

    def put(self, name: Hashable, value: T, size: int) -> None:
        with self.lock:
            old = self.entries.pop(name, None)
            if old is not None:
                self.held -= old[1]
            self.entries[name] = (value, size)
            self.held += size
            while self.held > self.budget and self.entries:
                self.held -= self.entries.popitem(last=False)[1][1]

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.held = 0
