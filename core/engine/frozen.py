"""Results of frozen components kept between runs, in this process (the reference's ``frozen`` flag).

A frozen node reuses its last output while its inputs are the same (the key names the flow, the node and a
digest of its parameters: :meth:`core.engine.runner.Runner._frozen_key`). Each process keeps its own
bounded store, most recently used last; another process runs the node once before it reuses its result.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, MutableMapping
from typing import Any

__all__ = ["FROZEN_RESULTS", "FrozenResults"]


class FrozenResults(MutableMapping[str, Any]):
    """A thread-safe mapping that forgets its least recently used entries past ``limit``."""

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._lock = threading.Lock()

    def __getitem__(self, key: str) -> Any:
        with self._lock:
            value = self._items[key]
            self._items.move_to_end(key)
            return value

    def __setitem__(self, key: str, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)

    def __delitem__(self, key: str) -> None:
        with self._lock:
            del self._items[key]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._items

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._items))

    def __len__(self) -> int:
        return len(self._items)


#: the store every served run uses (:func:`core.engine.execution.context_for`)
FROZEN_RESULTS = FrozenResults()
