"""Shared state: a small key-value store every process of one deployment sees.

One interface, three backends, chosen like the job backend:

* :class:`FileState` (embedded default): one small file per key under
  ``<config_dir>/shared/``; read-modify-write under ``flock``, so every web
  process of the machine (gunicorn workers) shares values, counters and
  compare-and-set;
* :class:`RedisState` (scale-out): keys under ``service:shared:<namespace>:``
  on Redis, compare-and-set and counters in Lua;
* :class:`MemoryState`: one process (embedding, tests).

Operations: :meth:`~SharedState.get`, :meth:`~SharedState.put` (optionally only
when the key exists), :meth:`~SharedState.cas` (compare-and-set, None meaning
"absent"), :meth:`~SharedState.incr` (a counter; its TTL starts with the
first increment: a fixed window), :meth:`~SharedState.delete` (True for the
one caller that removed it: a claim), :meth:`~SharedState.scan` (keys under a
prefix). Keys are short strings of ``[A-Za-z0-9_.:/-]``; values are strings.
Every value may expire (``ttl`` seconds).

Used by the login rate limit (a ``limits`` storage over it, so Flask-Limiter
counts across workers) and by the build plugin's poll cursors, activity marks
and counters. Hand-written rather than a library: no maintained Python
package offers a cross-process key-value store on plain files with CAS; the
Redis side is the few commands it needs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from limits.storage import Storage

__all__ = ["FileState", "MemoryState", "RedisState", "SharedLimitsStorage", "SharedState"]

_KEY = re.compile(r"^[A-Za-z0-9_.:/-]{1,200}$")


def check_key(key: str) -> str:
    if not isinstance(key, str) or not _KEY.match(key) or ".." in key:
        raise ValueError(f"invalid shared-state key: {key!r}")
    return key


class SharedState:
    """The interface (every method is safe from any thread and any process of the deployment)."""

    def get(self, key: str) -> str | None:
        raise NotImplementedError

    def get_many(self, keys: list[str]) -> list[str | None]:
        """The values of ``keys``, in order (Redis: one ``MGET``, one round trip)."""
        return [self.get(key) for key in keys]

    def put(self, key: str, value: str, ttl: float | None = None, *, only_if_exists: bool = False) -> bool:
        """Set ``key``; with ``only_if_exists`` only when it is there. True when written."""
        raise NotImplementedError

    def cas(self, key: str, old: str | None, new: str, ttl: float | None = None) -> bool:
        """Set ``key`` to ``new`` if it holds ``old`` (None: if absent). True for the one caller that won."""
        raise NotImplementedError

    def incr(self, key: str, amount: int = 1, ttl: float | None = None) -> int:
        """Add ``amount``; a new counter expires ``ttl`` seconds after its first increment. Returns the total."""
        raise NotImplementedError

    def ttl(self, key: str) -> float | None:
        """Seconds until ``key`` expires (None: no expiry or no key)."""
        raise NotImplementedError

    def delete(self, key: str) -> bool:
        """Remove ``key``; True for the one caller that removed it."""
        raise NotImplementedError

    def scan(self, prefix: str, limit: int = 1000) -> dict[str, str]:
        """Up to ``limit`` live keys starting with ``prefix``, with their values."""
        raise NotImplementedError

    def clear(self) -> None:
        """Remove every key of this store (tests, limiter reset)."""
        raise NotImplementedError


# --- one process --------------------------------------------------------------------------------------
class MemoryState(SharedState):
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.data: dict[str, tuple[str, float | None]] = {}

    def _live(self, key: str, now: float) -> tuple[str, float | None] | None:
        item = self.data.get(key)
        if item is not None and item[1] is not None and item[1] <= now:
            del self.data[key]
            return None
        return item

    def get(self, key: str) -> str | None:
        with self.lock:
            item = self._live(check_key(key), time.time())
            return item[0] if item else None

    def put(self, key: str, value: str, ttl: float | None = None, *, only_if_exists: bool = False) -> bool:
        now = time.time()
        with self.lock:
            if only_if_exists and self._live(check_key(key), now) is None:
                return False
            self.data[check_key(key)] = (value, now + ttl if ttl else None)
            return True

    def cas(self, key: str, old: str | None, new: str, ttl: float | None = None) -> bool:
        now = time.time()
        with self.lock:
            item = self._live(check_key(key), now)
            if (item[0] if item else None) != old:
                return False
            self.data[key] = (new, now + ttl if ttl else None)
            return True

    def incr(self, key: str, amount: int = 1, ttl: float | None = None) -> int:
        now = time.time()
        with self.lock:
            item = self._live(check_key(key), now)
            if item is None:
                item = ("0", now + ttl if ttl else None)
            total = int(item[0]) + amount
            self.data[key] = (str(total), item[1])
            return total

    def ttl(self, key: str) -> float | None:
        now = time.time()
        with self.lock:
            item = self._live(check_key(key), now)
            return None if item is None or item[1] is None else max(0.0, item[1] - now)

    def delete(self, key: str) -> bool:
        with self.lock:
            return self.data.pop(check_key(key), None) is not None

    def scan(self, prefix: str, limit: int = 1000) -> dict[str, str]:
        now = time.time()
        with self.lock:
            found = {}
            for key in list(self.data):
                if key.startswith(prefix) and self._live(key, now) is not None:
                    found[key] = self.data[key][0]
                    if len(found) >= limit:
                        break
            return found

    def clear(self) -> None:
        with self.lock:
            self.data.clear()


# --- one machine: files -------------------------------------------------------------------------------
class FileState(SharedState):
    """One file per key (``{"v": value, "e": expires_at}``), read and written under ``flock``."""

    sweep_interval = 60.0

    def __init__(self, root: Path | str) -> None:
        self.root = str(root)
        os.makedirs(self.root, exist_ok=True)
        self.next_sweep = 0.0

    def _path(self, key: str) -> str:
        return os.path.join(self.root, urllib.parse.quote(check_key(key), safe=""))

    @staticmethod
    def _read(fd: int) -> tuple[str, float | None] | None:
        raw = b""
        while chunk := os.pread(fd, 65536, len(raw)):
            raw += chunk
        if not raw:
            return None
        try:
            item = json.loads(raw)
            value, expires = str(item["v"]), item.get("e")
        except (ValueError, KeyError, TypeError):
            return None
        if expires is not None and float(expires) <= time.time():
            return None
        return value, (float(expires) if expires is not None else None)

    @staticmethod
    def _write(fd: int, value: str, expires: float | None) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"v": value, "e": expires}).encode(), 0)

    @contextlib.contextmanager
    def _locked(self, key: str, *, create: bool = True, exclusive: bool = True) -> Any:
        path = self._path(key)
        try:
            flags = (os.O_RDWR | os.O_CREAT) if create else (os.O_RDWR if exclusive else os.O_RDONLY)
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            yield None
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield fd
        finally:
            os.close(fd)

    def get(self, key: str) -> str | None:
        with self._locked(key, create=False, exclusive=False) as fd:
            item = self._read(fd) if fd is not None else None
            return item[0] if item else None

    def put(self, key: str, value: str, ttl: float | None = None, *, only_if_exists: bool = False) -> bool:
        self._sweep()
        with self._locked(key, create=not only_if_exists) as fd:
            if fd is None or (only_if_exists and self._read(fd) is None):
                return False
            self._write(fd, value, time.time() + ttl if ttl else None)
            return True

    def cas(self, key: str, old: str | None, new: str, ttl: float | None = None) -> bool:
        self._sweep()
        with self._locked(key) as fd:
            item = self._read(fd)
            if (item[0] if item else None) != old:
                return False
            self._write(fd, new, time.time() + ttl if ttl else None)
            return True

    def incr(self, key: str, amount: int = 1, ttl: float | None = None) -> int:
        self._sweep()
        with self._locked(key) as fd:
            item = self._read(fd) or ("0", time.time() + ttl if ttl else None)
            total = int(item[0]) + amount
            self._write(fd, str(total), item[1])
            return total

    def ttl(self, key: str) -> float | None:
        with self._locked(key, create=False, exclusive=False) as fd:
            item = self._read(fd) if fd is not None else None
            return None if item is None or item[1] is None else max(0.0, item[1] - time.time())

    def delete(self, key: str) -> bool:
        path = self._path(key)
        with self._locked(key, create=False) as fd:
            if fd is None:
                return False
            live = self._read(fd) is not None
            try:
                os.unlink(path)  # exactly one process removes it
            except FileNotFoundError:
                return False
            return live

    def scan(self, prefix: str, limit: int = 1000) -> dict[str, str]:
        found: dict[str, str] = {}
        quoted = urllib.parse.quote(prefix, safe="")
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as entries:
            for entry in entries:
                if not entry.name.startswith(quoted):
                    continue
                key = urllib.parse.unquote(entry.name)
                value = self.get(key)
                if value is not None:
                    found[key] = value
                    if len(found) >= limit:
                        break
        return found

    def clear(self) -> None:
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as entries:
            for entry in entries:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)

    def _sweep(self) -> None:
        """Delete the files of expired keys, at most once a minute per process."""
        now = time.monotonic()
        if now < self.next_sweep:
            return
        self.next_sweep = now + self.sweep_interval
        with contextlib.suppress(FileNotFoundError), os.scandir(self.root) as entries:
            for entry in entries:
                with (
                    contextlib.suppress(OSError, ValueError),
                    self._locked(urllib.parse.unquote(entry.name), create=False) as fd,
                ):
                    if fd is not None and os.fstat(fd).st_size and self._read(fd) is None:
                        os.unlink(entry.path)


# --- any number of machines: Redis ----------------------------------------------------------------
_CAS = """
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '' then
  if cur then return 0 end
elseif cur ~= ARGV[2] then
  return 0
end
if ARGV[4] ~= '' then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[4])
else
  redis.call('SET', KEYS[1], ARGV[3])
end
return 1
"""
_INCR = """
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
if ARGV[2] ~= '' and redis.call('PTTL', KEYS[1]) == -1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return total
"""


class RedisState(SharedState):
    def __init__(self, client: Any, namespace: str = "default") -> None:
        self.r = client  # decode_responses=True
        self.prefix = f"service:shared:{namespace}:"
        self._cas = client.register_script(_CAS)
        self._incr = client.register_script(_INCR)

    def namespaced(self, namespace: str) -> RedisState:
        """The same Redis, through the same client, under the keys of ``namespace``."""
        return RedisState(self.r, namespace)

    def _k(self, key: str) -> str:
        return self.prefix + check_key(key)

    def get(self, key: str) -> str | None:
        value: str | None = self.r.get(self._k(key))
        return value

    def get_many(self, keys: list[str]) -> list[str | None]:
        values: list[str | None] = self.r.mget([self._k(key) for key in keys])
        return values

    def put(self, key: str, value: str, ttl: float | None = None, *, only_if_exists: bool = False) -> bool:
        px = int(ttl * 1000) if ttl else None
        return bool(self.r.set(self._k(key), value, px=px, xx=only_if_exists))

    def cas(self, key: str, old: str | None, new: str, ttl: float | None = None) -> bool:
        px = str(int(ttl * 1000)) if ttl else ""
        return bool(self._cas(keys=[self._k(key)], args=["" if old is None else "1", old or "", new, px]))

    def incr(self, key: str, amount: int = 1, ttl: float | None = None) -> int:
        px = str(int(ttl * 1000)) if ttl else ""
        return int(self._incr(keys=[self._k(key)], args=[amount, px]))

    def ttl(self, key: str) -> float | None:
        ms = int(self.r.pttl(self._k(key)))
        return ms / 1000 if ms >= 0 else None

    def delete(self, key: str) -> bool:
        return bool(self.r.delete(self._k(key)))

    def scan(self, prefix: str, limit: int = 1000) -> dict[str, str]:
        keys = []
        for raw in self.r.scan_iter(match=self.prefix + prefix + "*", count=500):
            keys.append(raw)
            if len(keys) >= limit:
                break
        if not keys:
            return {}
        values = self.r.mget(keys)
        return {k[len(self.prefix) :]: v for k, v in zip(keys, values, strict=True) if v is not None}

    def clear(self) -> None:
        doomed = list(self.r.scan_iter(match=self.prefix + "*", count=1000))
        if doomed:
            self.r.delete(*doomed)


# --- rate limits over shared state -----------------------------------------------------------------
class SharedLimitsStorage(Storage):
    """A ``limits`` storage over a :class:`SharedState` (fixed windows), so Flask-Limiter counts
    across every worker of one server with the embedded default too (``memory://`` counts per process)."""

    STORAGE_SCHEME = ["service-shared"]

    def __init__(self, uri: str | None = None, wrap_exceptions: bool = False, **options: Any) -> None:
        super().__init__(uri, wrap_exceptions, **options)
        state = options.get("state")
        self.state: SharedState = state if isinstance(state, SharedState) else MemoryState()

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return (OSError, ValueError)

    @staticmethod
    def _key(key: str) -> str:
        return "limits/" + re.sub(r"[^A-Za-z0-9_.:-]", "_", key)[:180]

    def incr(self, key: str, expiry: int, amount: int = 1) -> int:
        return self.state.incr(self._key(key), amount, ttl=expiry)

    def get(self, key: str) -> int:
        value = self.state.get(self._key(key))
        return int(value) if value else 0

    def get_expiry(self, key: str) -> float:
        return time.time() + (self.state.ttl(self._key(key)) or 0.0)

    def check(self) -> bool:
        return True

    def reset(self) -> int | None:
        found = self.state.scan("limits/")
        for key in found:
            self.state.delete(key)
        return len(found)

    def clear(self, key: str) -> None:
        self.state.delete(self._key(key))
