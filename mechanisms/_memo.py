"""A bounded memo for mechanisms whose output depends on less than the whole dataset."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["BoundedMemo"]

Value = TypeVar("Value")

#: Entries one memo keeps; past it, outputs are computed but not kept (memory stays bounded).
LIMIT = 1 << 16


class BoundedMemo(dict[Hashable, Value], Generic[Value]):
    """Outputs keyed by exactly what they depend on, at most ``limit`` of them. The key is the
    caller's contract: two datasets with one key must have one output."""

    def __init__(self, limit: int = LIMIT) -> None:
        super().__init__()
        self.limit = limit

    def get_or_compute(self, key: Hashable, compute: Callable[[], Value]) -> Value:
        """The value kept under ``key``, else ``compute()`` (kept while fewer than ``limit`` are)."""
        found = self.get(key)
        if found is None:
            found = compute()
            if len(self) < self.limit:
                self[key] = found
        return found
