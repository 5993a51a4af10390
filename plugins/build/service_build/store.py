"""What the build plugin keeps next to the job queue: poll cursors, client activity, the partial-build cache.

Implementations with one interface, chosen like the job backend:

* :class:`FileStore` (``inprocess`` jobs): files under ``<config_dir>/build/``,
  so every web process of the machine (gunicorn workers) shares poll cursors
  (``cursors/<job>``, moved by compare-and-set under ``flock``), activity marks
  (``polling/<job>``, the file's mtime is the last client activity; removing
  the file is the claim) and counters (``stats.json`` under ``flock``). The
  partial-build cache stays in the memory of each process (a
  :class:`MemoryStore`): a miss only recomputes the vertices.
* :class:`MemoryStore`: everything in the memory of one process (kept for
  embedding and tests).
* :class:`RedisStore` (``rq`` jobs): keys under ``service:build:<queue>:`` on
  the job queue's Redis, so every web process shares cursors, activity marks,
  counters and cached vertex results.

Keys (``NS = service:build:<queue>:``): ``NS cursor:<job>`` hash (``c`` last
delivered event id, ``d`` "1" once the end was delivered; expires with the
job's events), ``NS polling`` sorted set (polling builds by last client
activity), ``NS cache:<owner>:<flow>`` JSON (vertex results, short TTL),
``NS stats`` counters.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.jobs.localstore import valid_id

if TYPE_CHECKING:
    from core.jobs import JobQueue
    from core.settings import Settings

_CAS = """
local cur = redis.call('HGET', KEYS[1], 'c') or ''
if redis.call('HGET', KEYS[1], 'd') == '1' then return 0 end
if cur ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'c', ARGV[2], 'd', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""


class BuildStore:
    """Interface shared by both stores (all methods are safe to call from any thread)."""

    ttl: int

    # --- poll cursors: advanced with compare-and-set, so two pollers never get the same event
    def get_cursor(self, job_id: str) -> tuple[str | None, bool]:
        raise NotImplementedError

    def advance(self, job_id: str, old: str | None, new: str | None, done: bool) -> bool:
        raise NotImplementedError

    # --- client activity of polling builds (the watchdog's input)
    def watch(self, job_id: str) -> None:
        raise NotImplementedError

    def touch(self, job_id: str) -> None:
        raise NotImplementedError

    def unwatch(self, job_id: str) -> None:
        raise NotImplementedError

    def stale(self, before: float, limit: int = 200) -> list[str]:
        raise NotImplementedError

    def claim(self, job_id: str) -> bool:
        """Remove ``job_id`` from the watched set; True for the one caller that removed it."""
        raise NotImplementedError

    # --- partial-build cache
    def cache_get(self, key: str) -> dict[str, Any] | None:
        raise NotImplementedError

    def cache_put(self, key: str, value: dict[str, Any], ttl: int, max_bytes: int) -> bool:
        raise NotImplementedError

    # --- counters
    def incr(self, name: str, amount: int = 1) -> None:
        raise NotImplementedError

    def counters(self) -> dict[str, int]:
        raise NotImplementedError


class MemoryStore(BuildStore):
    sweep_interval = 30.0

    def __init__(self, ttl: int = 3600) -> None:
        self.ttl = ttl
        self.lock = threading.Lock()
        self.cursors: dict[str, tuple[str | None, bool, float]] = {}  # job -> (cursor, done, expires)
        self.polling: dict[str, float] = {}
        self.cache: dict[str, tuple[dict[str, Any], float]] = {}
        self.stats: dict[str, int] = {}
        self.next_sweep = 0.0

    def _sweep(self, now: float) -> None:
        if now < self.next_sweep:
            return
        self.next_sweep = now + self.sweep_interval
        for key in [k for k, v in self.cursors.items() if v[2] < now]:
            del self.cursors[key]
        for key in [k for k, v in self.cache.items() if v[1] < now]:
            del self.cache[key]

    def get_cursor(self, job_id: str) -> tuple[str | None, bool]:
        with self.lock:
            cursor, done, _ = self.cursors.get(job_id, (None, False, 0.0))
            return cursor, done

    def advance(self, job_id: str, old: str | None, new: str | None, done: bool) -> bool:
        now = time.monotonic()
        with self.lock:
            self._sweep(now)
            cursor, was_done, _ = self.cursors.get(job_id, (None, False, 0.0))
            if was_done or (cursor or "") != (old or ""):
                return False
            self.cursors[job_id] = (new, done, now + self.ttl)
            return True

    def watch(self, job_id: str) -> None:
        with self.lock:
            self.polling[job_id] = time.time()

    def touch(self, job_id: str) -> None:
        with self.lock:
            if job_id in self.polling:
                self.polling[job_id] = time.time()

    def unwatch(self, job_id: str) -> None:
        with self.lock:
            self.polling.pop(job_id, None)

    def stale(self, before: float, limit: int = 200) -> list[str]:
        with self.lock:
            return [k for k, t in self.polling.items() if t < before][:limit]

    def claim(self, job_id: str) -> bool:
        with self.lock:
            return self.polling.pop(job_id, None) is not None

    def cache_get(self, key: str) -> dict[str, Any] | None:
        with self.lock:
            entry = self.cache.get(key)
            if entry is None or entry[1] < time.monotonic():
                return None
            return entry[0]

    def cache_put(self, key: str, value: dict[str, Any], ttl: int, max_bytes: int) -> bool:
        # same size rule as Redis, and a JSON round trip so nothing shares state with the run
        text = json.dumps(value)
        if len(text) > max_bytes:
            return False
        now = time.monotonic()
        with self.lock:
            self._sweep(now)
            self.cache[key] = (json.loads(text), now + ttl)
        return True

    def incr(self, name: str, amount: int = 1) -> None:
        with self.lock:
            self.stats[name] = self.stats.get(name, 0) + amount

    def counters(self) -> dict[str, int]:
        with self.lock:
            return dict(self.stats)


class FileStore(BuildStore):
    """Cursors, activity and counters in files shared by the processes of one config directory."""

    sweep_interval = 60.0

    def __init__(self, root: Path, ttl: int = 3600, local: MemoryStore | None = None) -> None:
        self.ttl = ttl
        self.root = str(root)
        self.ns = f"files:{self.root}"  # the watchdog keeps one target per store namespace
        self.cursors_dir = os.path.join(self.root, "cursors")
        self.polling_dir = os.path.join(self.root, "polling")
        self.stats_path = os.path.join(self.root, "stats.json")
        os.makedirs(self.cursors_dir, exist_ok=True)
        os.makedirs(self.polling_dir, exist_ok=True)
        self.local = local or MemoryStore(ttl)  # the partial-build cache, per process
        self.next_sweep = 0.0

    # --- poll cursors: "<cursor>\n<done>" in cursors/<job>, read under LOCK_SH, moved under LOCK_EX
    @staticmethod
    def _parse(raw: bytes) -> tuple[str | None, bool]:
        cursor, _, done = raw.decode().partition("\n")
        return (cursor or None), done == "1"

    def get_cursor(self, job_id: str) -> tuple[str | None, bool]:
        if not valid_id(job_id):
            return None, False
        try:
            fd = os.open(os.path.join(self.cursors_dir, job_id), os.O_RDONLY)
        except FileNotFoundError:
            return None, False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            return self._parse(os.pread(fd, 512, 0))
        finally:
            os.close(fd)

    def advance(self, job_id: str, old: str | None, new: str | None, done: bool) -> bool:
        if not valid_id(job_id):
            return False
        self._sweep()
        fd = os.open(os.path.join(self.cursors_dir, job_id), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            cursor, was_done = self._parse(os.pread(fd, 512, 0))
            if was_done or (cursor or "") != (old or ""):
                return False
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{new or ''}\n{'1' if done else '0'}".encode(), 0)
            return True
        finally:
            os.close(fd)

    # --- client activity: polling/<job>, its mtime is the last activity
    def _mark(self, job_id: str) -> str | None:
        return os.path.join(self.polling_dir, job_id) if valid_id(job_id) else None

    def watch(self, job_id: str) -> None:
        path = self._mark(job_id)
        if path is not None:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
            os.utime(path)

    def touch(self, job_id: str) -> None:
        path = self._mark(job_id)
        if path is not None:
            with contextlib.suppress(FileNotFoundError):
                os.utime(path)  # only a watched build (as ZADD XX)

    def unwatch(self, job_id: str) -> None:
        self.claim(job_id)

    def stale(self, before: float, limit: int = 200) -> list[str]:
        found: list[str] = []
        try:
            entries = os.scandir(self.polling_dir)
        except FileNotFoundError:
            return found
        with entries:
            for entry in entries:
                try:
                    if entry.stat().st_mtime < before:
                        found.append(entry.name)
                except FileNotFoundError:
                    continue
                if len(found) >= limit:
                    break
        return found

    def claim(self, job_id: str) -> bool:
        path = self._mark(job_id)
        if path is None:
            return False
        try:
            os.unlink(path)  # exactly one process removes it
        except FileNotFoundError:
            return False
        return True

    # --- partial-build cache: per process
    def cache_get(self, key: str) -> dict[str, Any] | None:
        return self.local.cache_get(key)

    def cache_put(self, key: str, value: dict[str, Any], ttl: int, max_bytes: int) -> bool:
        return self.local.cache_put(key, value, ttl, max_bytes)

    # --- counters: stats.json under LOCK_EX
    def incr(self, name: str, amount: int = 1) -> None:
        fd = os.open(self.stats_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            stats = self._read_stats(fd)
            stats[name] = stats.get(name, 0) + amount
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(stats).encode(), 0)
        finally:
            os.close(fd)

    def counters(self) -> dict[str, int]:
        try:
            fd = os.open(self.stats_path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            return self._read_stats(fd)
        finally:
            os.close(fd)

    @staticmethod
    def _read_stats(fd: int) -> dict[str, int]:
        raw = b""
        while chunk := os.pread(fd, 65536, len(raw)):
            raw += chunk
        try:
            stats = json.loads(raw or b"{}")
        except ValueError:
            return {}
        return {str(k): int(v) for k, v in stats.items()} if isinstance(stats, dict) else {}

    def _sweep(self) -> None:
        """Delete cursors not moved for ``ttl`` (their job has expired), at most once a minute."""
        now = time.monotonic()
        if now < self.next_sweep:
            return
        self.next_sweep = now + self.sweep_interval
        cutoff = time.time() - self.ttl
        with contextlib.suppress(FileNotFoundError), os.scandir(self.cursors_dir) as entries:
            for entry in entries:
                with contextlib.suppress(FileNotFoundError):
                    if entry.stat().st_mtime < cutoff:
                        os.unlink(entry.path)


class RedisStore(BuildStore):
    def __init__(self, client: Any, queue_name: str, ttl: int = 3600) -> None:
        self.r = client  # decode_responses=True
        self.ttl = ttl
        self.ns = f"service:build:{queue_name}:"
        self.polling_key = self.ns + "polling"
        self.stats_key = self.ns + "stats"
        self._cas = client.register_script(_CAS)

    def cursor_key(self, job_id: str) -> str:
        return f"{self.ns}cursor:{job_id}"

    def get_cursor(self, job_id: str) -> tuple[str | None, bool]:
        cursor, done = self.r.hmget(self.cursor_key(job_id), "c", "d")
        return (cursor or None), done == "1"

    def advance(self, job_id: str, old: str | None, new: str | None, done: bool) -> bool:
        return bool(
            self._cas(keys=[self.cursor_key(job_id)], args=[old or "", new or "", "1" if done else "0", self.ttl])
        )

    def watch(self, job_id: str) -> None:
        self.r.zadd(self.polling_key, {job_id: time.time()})

    def touch(self, job_id: str) -> None:
        self.r.zadd(self.polling_key, {job_id: time.time()}, xx=True)

    def unwatch(self, job_id: str) -> None:
        self.r.zrem(self.polling_key, job_id)

    def stale(self, before: float, limit: int = 200) -> list[str]:
        return list(self.r.zrangebyscore(self.polling_key, "-inf", f"({before}", start=0, num=limit))

    def claim(self, job_id: str) -> bool:
        return bool(self.r.zrem(self.polling_key, job_id))

    def cache_get(self, key: str) -> dict[str, Any] | None:
        raw = self.r.get(self.ns + "cache:" + key)
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
        self.r.set(self.ns + "cache:" + key, text, ex=max(1, int(ttl)))
        return True

    def incr(self, name: str, amount: int = 1) -> None:
        self.r.hincrby(self.stats_key, name, amount)

    def counters(self) -> dict[str, int]:
        return {k: int(v) for k, v in (self.r.hgetall(self.stats_key) or {}).items()}


_memory: MemoryStore | None = None
_memory_lock = threading.Lock()


def make_store(settings: Settings, jobs: JobQueue) -> BuildStore:
    """The store for the app's job backend: Redis for RQ, shared files for in-process jobs.

    The in-process cache of vertex results is one per process, shared by every app of it.
    """
    global _memory
    ttl = max(1, int(settings.job_event_ttl_seconds))
    if getattr(jobs, "backend", "") == "rq":
        from core.jobs.rq_backend import redis_client

        return RedisStore(redis_client(settings.redis_url or ""), getattr(jobs, "queue_name", "service"), ttl)
    with _memory_lock:
        if _memory is None:
            _memory = MemoryStore(ttl)
        _memory.ttl = ttl
        local = _memory
    return FileStore(settings.resolved_config_dir / "build", ttl, local)
