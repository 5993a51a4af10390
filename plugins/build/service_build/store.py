"""What the build plugin keeps next to the job queue: poll cursors, client activity, the partial-build cache.

One :class:`BuildStore` over the core's shared state (:mod:`core.shared`),
chosen like the job backend:

* ``inprocess`` jobs: a :class:`~core.shared.FileState` under
  ``<config_dir>/build/``, so every web process of the machine (gunicorn
  workers) shares poll cursors, activity marks and counters; the partial-build
  cache stays in the memory of each process (a miss only recomputes vertices);
* ``rq`` jobs: a :class:`~core.shared.RedisState` namespaced by the queue, so
  every web process shares all of it, the cache included.

Keys: ``cursor:<job>`` (``"<last delivered event id>\\n<1 once the end was
delivered>"``, moved by compare-and-set, expiring with the job's events),
``polling:<job>`` (the last client activity of a polling build, epoch
seconds), ``cache:<owner>:<flow>`` (JSON vertex results, short TTL),
``stats:<name>`` (counters).
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from core.jobs.localstore import valid_id
from core.shared import FileState, MemoryState, RedisState, SharedState

if TYPE_CHECKING:
    from core.appstate import SharedStatePort
    from core.jobs import JobQueue
    from core.settings import Settings


class BuildStore:
    """Cursors, activity marks, cache and counters of builds (safe from any thread and process)."""

    def __init__(self, shared: SharedState, cache: SharedState, ttl: int = 3600, ns: str = "memory") -> None:
        self.shared = shared
        self.cache = cache
        self.ttl = ttl
        self.ns = ns  # the watchdog keeps one target per namespace

    # --- poll cursors: advanced with compare-and-set, so two pollers never get the same event
    def get_cursor(self, job_id: str) -> tuple[str | None, bool]:
        if not valid_id(job_id):
            return None, False
        raw = self.shared.get(f"cursor:{job_id}")
        if raw is None:
            return None, False
        cursor, _, done = raw.partition("\n")
        return (cursor or None), done == "1"

    def advance(self, job_id: str, old: str | None, new: str | None, done: bool) -> bool:
        if not valid_id(job_id):
            return False
        key = f"cursor:{job_id}"
        value = f"{new or ''}\n{'1' if done else '0'}"
        if old is None and self.shared.cas(key, None, value, self.ttl):
            return True
        return self.shared.cas(key, f"{old or ''}\n0", value, self.ttl)

    # --- client activity of polling builds (the watchdog's input)
    def watch(self, job_id: str) -> None:
        if valid_id(job_id):
            self.shared.put(f"polling:{job_id}", repr(time.time()), self.ttl)

    def touch(self, job_id: str) -> None:
        if valid_id(job_id):
            self.shared.put(f"polling:{job_id}", repr(time.time()), self.ttl, only_if_exists=True)

    def unwatch(self, job_id: str) -> None:
        self.claim(job_id)

    def stale(self, before: float, limit: int = 200) -> list[str]:
        found = []
        for key, value in self.shared.scan("polling:").items():
            try:
                if float(value) < before:
                    found.append(key.removeprefix("polling:"))
            except ValueError:
                continue
            if len(found) >= limit:
                break
        return found

    def claim(self, job_id: str) -> bool:
        """Stop watching ``job_id``; True for the one caller that removed the mark."""
        return valid_id(job_id) and self.shared.delete(f"polling:{job_id}")

    # --- partial-build cache (a JSON round trip, so nothing shares state with the run)
    def cache_get(self, key: str) -> dict[str, Any] | None:
        raw = self.cache.get(_cache_key(key))
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def cache_put(self, key: str, value: dict[str, Any], ttl: int, max_bytes: int) -> bool:
        text = json.dumps(value)
        if len(text) > max_bytes:
            return False
        self.cache.put(_cache_key(key), text, max(1, int(ttl)))
        return True

    # --- counters
    def incr(self, name: str, amount: int = 1) -> None:
        self.shared.incr(f"stats:{name}", amount)

    def counters(self) -> dict[str, int]:
        return {k.removeprefix("stats:"): int(v) for k, v in self.shared.scan("stats:").items()}


def _cache_key(key: str) -> str:
    return "cache:" + "".join(c if c.isalnum() or c in "_.:-" else "_" for c in key)[:180]


_local_cache = MemoryState()  # the in-process backend's partial-build cache: one per process, every app


def make_store(settings: Settings, jobs: JobQueue, app_shared: SharedStatePort) -> BuildStore:
    """The store for the app's job backend: Redis for RQ, shared files for in-process jobs.

    With RQ the app's shared state is on the queue's Redis: the store takes a namespace of it.
    """
    ttl = max(1, int(settings.job_event_ttl_seconds))
    if getattr(jobs, "backend", "") == "rq" and isinstance(app_shared, RedisState):
        queue = getattr(jobs, "queue_name", "service")
        shared = app_shared.namespaced(f"build:{queue}")
        return BuildStore(shared, shared, ttl, ns=shared.prefix)
    root = settings.resolved_config_dir / "build"
    return BuildStore(FileState(root), _local_cache, ttl, ns=f"files:{root}")
