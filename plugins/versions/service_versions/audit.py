"""The audit log: entries queued in the request, written in batches by one thread per process.

``on_audit`` (the core's hook, notified through :func:`core.audit.record` by the plugin that owns
what changed) only appends to a bounded in-memory queue: writing an entry never slows a request or a
run. A writer thread, asleep until an entry is queued, gathers entries for ``interval`` seconds and
writes them in one short transaction; :meth:`flush`
drains synchronously (reads of the log, tests, exit). The table is append-only: no route updates or
deletes an entry (``SERVICE_AUDIT_RETENTION_DAYS`` alone removes old ones).
"""

from __future__ import annotations

import collections
import datetime as dt
import logging
import os
import threading
import time
import uuid
from typing import Any

import sqlalchemy as sa

from core import db
from core.contracts import AuditEntry
from core.jobs import at_exit
from service_versions.models import AuditEvent

log = logging.getLogger(__name__)

_writers: dict[int, AuditWriter] = {}
_writers_lock = threading.Lock()


def _uuid(value: Any) -> uuid.UUID | None:
    try:
        return None if value is None else uuid.UUID(str(value))
    except ValueError:
        return None


def row_of(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": uuid.UUID(entry.id),
        "timestamp": dt.datetime.fromisoformat(entry.timestamp),
        "action": entry.action[:128],
        "operation": entry.operation,
        "event_type": "action",
        "result": entry.result,
        "error_code": entry.error_code,
        "request_id": _uuid(entry.request_id) or uuid.uuid4(),
        "resource_type": entry.resource_type[:32],
        "resource_id": None if entry.resource_id is None else entry.resource_id[:64],
        "resource_name": None if entry.resource_name is None else entry.resource_name[:255],
        "user_id": _uuid(entry.user_id),
        "actor_type": entry.actor_type[:16],
        "actor_id": entry.actor_id,
        "details": dict(entry.details),
    }


class AuditWriter:
    def __init__(self, engine: sa.Engine, *, capacity: int = 50_000, interval: float = 0.5) -> None:
        self.engine = engine
        self.capacity = capacity
        self.interval = interval
        self.dropped = 0
        self._queue: collections.deque[dict[str, Any]] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        #: the process this writer belongs to: a forked worker inherits a copy of the parent's queue, which
        #: the parent writes itself (gunicorn's master keeps its thread), so the child starts a writer of its own
        self.pid = os.getpid()

    def submit(self, entry: AuditEntry) -> None:
        if len(self._queue) >= self.capacity:
            self.dropped += 1
            return
        self._queue.append(row_of(entry))
        self._wake.set()
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name="audit-writer", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        """Sleep until an entry is queued (no idle wake-ups), gather a batch for ``interval``, write it."""
        while True:
            self._wake.wait()
            self._wake.clear()
            time.sleep(self.interval)
            try:
                self.flush()
            except Exception:
                log.exception("audit: writing entries failed; they are retried")

    def flush(self) -> int:
        """Write every queued entry now (in this thread); how many were written."""
        with self._lock:
            rows: list[dict[str, Any]] = []
            while self._queue:
                rows.append(self._queue.popleft())
            if not rows:
                return 0
            try:
                if db.holds_transaction(self.engine):  # this thread's request holds the (SQLite) connection
                    db.session().execute(_insert(self.engine), rows)
                else:
                    with self.engine.begin() as conn:
                        conn.execute(_insert(self.engine), rows)
            except Exception:
                self._queue.extendleft(reversed(rows))
                raise
            return len(rows)


def _insert(engine: sa.Engine) -> Any:
    """The insert of a batch; an entry already written (a retried batch whose commit did go through) is
    skipped, so one duplicate can never block the rest of the queue."""
    if engine.dialect.name in ("postgresql", "sqlite"):
        from sqlalchemy.dialects import postgresql, sqlite

        dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(AuditEvent).on_conflict_do_nothing(index_elements=["id"])
    return sa.insert(AuditEvent)


def writer(engine: sa.Engine) -> AuditWriter:
    with _writers_lock:
        found = _writers.get(id(engine))
        if found is None or found.engine is not engine or found.pid != os.getpid():
            found = _writers[id(engine)] = AuditWriter(engine)
        return found


def prune(engine: sa.Engine, days: int) -> int:
    """Remove entries older than ``days`` (0: keep everything)."""
    if days <= 0:
        return 0
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    with engine.begin() as conn:
        result = conn.execute(sa.delete(AuditEvent).where(AuditEvent.timestamp < cutoff))
    return int(getattr(result, "rowcount", 0) or 0)


def _flush_all() -> None:  # pragma: no cover - exit path
    for w in list(_writers.values()):
        try:
            w.flush()
        except Exception:  # the database may be gone at exit
            log.warning("audit: %d entries not written at exit", len(w._queue))


at_exit(_flush_all)
