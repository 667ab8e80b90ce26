"""What a server keeps in memory between calls (parsed files, query results): values by key,
the least recently used dropped first while their total size is over a bound."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Recent(Generic[K, V]):
    """At most `total` in all, by `size`; a value larger than `most` is not kept."""

    def __init__(self, size: Callable[[V], int], total: int, most: int | None = None) -> None:
        self.values: OrderedDict[K, V] = OrderedDict()
        self.size, self.total, self.most = size, total, total if most is None else most
        self.held = 0

    def get(self, key: K) -> V | None:
        value = self.values.get(key)
        if value is not None:
            self.values.move_to_end(key)
        return value

    def keep(self, key: K, value: V) -> None:
        size = self.size(value)
        if size > self.most or key in self.values:
            return
        self.values[key] = value
        self.held += size
        while self.held > self.total:
            self.held -= self.size(self.values.popitem(last=False)[1])
