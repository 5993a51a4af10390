"""The in-process backend's records: one per job run by this process, in a store shared by every queue.

The store outlives the app (an app rebuilt behind the WSGI holder still sees the
jobs the previous one started) and is emptied in a forked child (the jobs'
threads did not survive the fork: their records belong to the parent, which the
child reads through the files like any other process). Also here: the JSON
checks every backend applies to kwargs, results and event data, and the
conversions of file records and cursors.
"""

from __future__ import annotations

import json
import os
import threading
import weakref
from collections import Counter, deque
from typing import Any

from core.jobs import Event, JobInfo, JobState
from core.jobs.localstore import JobFiles, identity


def to_json_value(value: Any, what: str) -> Any:
    """A deep copy of ``value`` through JSON (what the RQ backend stores); TypeError if not JSON."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be JSON-serialisable: {exc}") from None


def json_text(value: Any, what: str) -> str:
    """``value`` as JSON text; TypeError if not JSON."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{what} must be JSON-serialisable: {exc}") from None


class Record:
    """One job run by this process; its fields are guarded by its own lock (file writes included)."""

    def __init__(
        self, info: JobInfo, func: Any, kwargs: dict[str, Any], files: JobFiles, ttl: float, max_events: int
    ) -> None:
        self.info = info
        self.func = func
        self.kwargs = kwargs
        self.files = files
        self.ttl = ttl
        self.events: deque[Event] = deque(maxlen=max_events)
        self.size = 0  # bytes in the events file = the id of the last event
        self.dropped_upto = 0  # id of the newest event no longer kept in memory
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.cancel_requested = False
        self.time_limit = 0.0
        self.deadline: float | None = None  # monotonic
        self.expires_at: float | None = None  # monotonic
        self.timed_out = False

    def file_record(self) -> dict[str, Any]:
        i = self.info
        return {
            "id": i.id,
            "name": i.name,
            "owner": i.owner,
            "state": i.state.value,
            "created_at": i.created_at,
            "started_at": i.started_at,
            "ended_at": i.ended_at,
            "result": i.result,
            "error": i.error,
            "meta": i.meta,
            "cancel_requested": self.cancel_requested,
            "ttl": self.ttl,
            **identity(),
        }


class Store:
    """Job records of one process, shared by every :class:`InProcessQueue`; ``lock`` guards the dict and counters."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.jobs: dict[str, Record] = {}
        self.counters: Counter[str] = Counter()
        self.next_sweep = 0.0
        _stores.add(self)

    def _after_fork(self) -> None:
        # the jobs' threads did not survive the fork: their records belong to the parent,
        # which the child now reads through the files like any other process
        self.lock = threading.Lock()
        self.jobs = {}
        self.counters = Counter()
        self.next_sweep = 0.0


_stores: weakref.WeakSet[Store] = weakref.WeakSet()
_default_store: Store | None = None
_default_store_lock = threading.Lock()


def default_store() -> Store:
    global _default_store
    with _default_store_lock:
        if _default_store is None:
            _default_store = Store()
        return _default_store


def _after_fork_in_child() -> None:
    global _default_store_lock
    _default_store_lock = threading.Lock()
    for store in list(_stores):
        store._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def info_from_file(data: dict[str, Any]) -> JobInfo:
    return JobInfo(
        id=data["id"],
        name=data["name"],
        owner=data["owner"],
        state=JobState(data["state"]),
        created_at=data["created_at"],
        started_at=data.get("started_at"),
        ended_at=data.get("ended_at"),
        result=data.get("result"),
        error=data.get("error"),
        meta=dict(data.get("meta") or {}),
        cancel_requested=bool(data.get("cancel_requested")),
    )


def parse_cursor(after: str | None) -> int:
    if after is None or after == "":
        return 0
    try:
        cursor = int(after)
    except ValueError:
        raise ValueError(f"invalid event cursor {after!r}") from None
    if cursor < 0:
        raise ValueError(f"invalid event cursor {after!r}")
    return cursor


__all__ = [
    "Record",
    "Store",
    "default_store",
    "info_from_file",
    "json_text",
    "parse_cursor",
    "to_json_value",
]
