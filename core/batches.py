"""Rows written off the request, in batches: a writer thread per process and database.

A request that must record something nobody reads in the same instant (a webhook's ``queued`` execution, a
native trace) hands it to a :class:`BatchWriter` and answers; the writer's thread writes what gathered
meanwhile in one transaction. A request thread pays a list append; the database pays one commit per batch
instead of one per row.

Hand-written rather than a library: the standard library's ``concurrent.futures`` would run one call per
item (no batching), and a job queue would cost a round trip per item, which is what this saves.

Guarantees, and what they are not:

* what was put is written in order, by one thread per process and engine, or dropped with a warning when its
  write fails (``retry=False``) or put back in front of the queue and tried again a second later
  (``retry=True``: the write must then skip what an earlier, committed attempt wrote, e.g. ``ON CONFLICT DO
  NOTHING``);
* :meth:`BatchWriter.flush` has what was put before it written at once (a gathering batch does not wait out its
  interval) and waits until it is (reads that must see it call it);
* a forked process starts a writer of its own (what it inherited is its parent's to write), and what is still
  queued as the process ends is written then (``core.jobs.at_exit``: a forked RQ job process too);
* a crash of the process loses what was put in the last ``interval``: a writer is for rows that may be
  rebuilt or missed (the caller says which in its docs), never for the record a 2xx promises.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any, Generic, TypeVar

import sqlalchemy as sa

from core.jobs import at_exit

log = logging.getLogger(__name__)

T = TypeVar("T")

#: seconds a writer's thread waits for the next put before it ends (a new put starts another)
IDLE_SECONDS = 30.0


class BatchWriter(Generic[T]):
    """Writes the items put into it with ``write(engine, items)``, in batches, off the callers' threads."""

    def __init__(
        self,
        engine: sa.Engine,
        write: Callable[[sa.Engine, list[T]], object],
        *,
        name: str,
        interval: float = 0.0,
        capacity: int = 50_000,
        retry: bool = False,
    ) -> None:
        self.engine = engine
        self.name = name
        self.interval = interval  # seconds a batch gathers after its first item
        self.capacity = capacity
        self.retry = retry
        self.dropped = 0
        self.written = 0
        self.pid = os.getpid()
        self._write = write
        self._cond = threading.Condition()
        self._queue: list[T] = []
        self._busy = False
        self._writing: list[T] = []  # the batch being written
        self._thread: threading.Thread | None = None
        self._flushing = 0  # callers waiting in flush(): a gathering batch is written at once
        at_exit(self.flush)

    def put(self, item: T) -> None:
        """Queue ``item`` (dropped, counted in :attr:`dropped`, once ``capacity`` items wait)."""
        with self._cond:
            if len(self._queue) >= self.capacity:
                self.dropped += 1
                return
            self._queue.append(item)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
                self._thread.start()
            elif len(self._queue) == 1:
                # only the first item of a batch wakes the writer: a batch that is gathering sleeps until its
                # deadline (a wake-up per put cost each put a thread switch, about a fifth of an intake's CPU)
                self._cond.notify_all()

    def pending(self) -> list[T]:
        """What was put and is not written yet (the batch being written included), oldest first."""
        with self._cond:
            return [*self._writing, *self._queue] if self._busy else list(self._queue)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything put so far is written (at most ``timeout`` seconds); whether it was. With no
        thread to write it (it ended, or this process forked before it ran), write it here."""
        if os.getpid() != self.pid:
            return True  # a forked child's copy: its parent writes these
        end = time.monotonic() + timeout
        with self._cond:
            self._flushing += 1
            self._cond.notify_all()  # a batch gathering for its interval is written now
            try:
                while self._queue or self._busy:
                    if not self._busy and (self._thread is None or not self._thread.is_alive()):
                        self._take_and_write()
                        continue
                    if time.monotonic() >= end:
                        return False
                    self._cond.wait(0.05)
            finally:
                self._flushing -= 1
        return True

    def _work(self) -> None:
        with self._cond:
            while True:
                while not self._queue:
                    if not self._cond.wait(IDLE_SECONDS) and not self._queue:
                        self._thread = None
                        return
                deadline = time.monotonic() + self.interval  # the batch gathers (puts meanwhile do not wake it)
                while (left := deadline - time.monotonic()) > 0 and not self._flushing:
                    self._cond.wait(left)
                self._take_and_write()

    def _take_and_write(self) -> None:
        """Write the queue's items as one batch; called holding the condition, which it releases meanwhile."""
        batch, self._queue = self._queue, []
        self._busy, self._writing = True, batch
        self._cond.release()
        failed = False
        try:
            self._write(self.engine, batch)
        except Exception:  # a batch that cannot be written never fails its callers (they answered already)
            failed = True
            kept = ", kept to try again" if self.retry else ""
            log.warning("%s: %d rows not written%s", self.name, len(batch), kept, exc_info=True)
        finally:
            self._cond.acquire()
            self._busy, self._writing = False, []
            if failed and self.retry:
                self._queue[:0] = batch
            elif not failed:
                self.written += len(batch)
            self._cond.notify_all()
        if failed and self.retry:
            self._cond.wait(1.0)  # not in a tight loop against a database that is down


_writers: dict[tuple[str, int], BatchWriter[Any]] = {}
_writers_lock = threading.Lock()


def writer(
    engine: sa.Engine,
    name: str,
    write: Callable[[sa.Engine, list[T]], object],
    *,
    interval: float = 0.0,
    capacity: int = 50_000,
    retry: bool = False,
) -> BatchWriter[T]:
    """This process's writer called ``name`` for ``engine`` (made on first use; again after a fork)."""
    key = (name, id(engine))
    with _writers_lock:
        found = _writers.get(key)
        if found is None or found.engine is not engine or found.pid != os.getpid():
            found = _writers[key] = BatchWriter(
                engine, write, name=name, interval=interval, capacity=capacity, retry=retry
            )
        return found


def flush_all(timeout: float = 10.0) -> bool:
    """Wait until every writer of this process wrote what was put into it (a benchmark's count, a shutdown)."""
    with _writers_lock:
        found = [w for w in _writers.values() if w.pid == os.getpid()]
    return all([w.flush(timeout) for w in found])
