"""The audit log: entries queued in the request, written in batches by one thread per process.

``on_audit`` (the core's hook, notified through :func:`core.audit.record` by the plugin that owns
what changed) only puts the entry's row into this process's :class:`core.batches.BatchWriter` (bounded,
in memory): writing an entry never slows a request or a run. The writer's thread gathers entries for half a
second after the first and writes them in one short transaction; a batch that fails is put back and tried
again a second later (the insert skips an entry a committed attempt wrote already, so one duplicate never
blocks the queue). ``flush()`` waits until what was queued is written (reads of the log; the process's
exit). A forked worker writes with a writer of its own, never the copies of its parent's queue it inherited.
The table is append-only: no route updates or deletes an entry (``SERVICE_AUDIT_RETENTION_DAYS`` alone
removes old ones).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

import sqlalchemy as sa

from core import batches
from core.contracts import AuditEntry
from service_versions.models import AuditEvent

#: seconds a batch of entries gathers after its first
INTERVAL = 0.5


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


def _insert(engine: sa.Engine) -> Any:
    """The insert of a batch; an entry already written (a retried batch whose commit did go through) is
    skipped, so one duplicate can never block the rest of the queue."""
    if engine.dialect.name in ("postgresql", "sqlite"):
        from sqlalchemy.dialects import postgresql, sqlite

        dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
        return dialect.insert(AuditEvent).on_conflict_do_nothing(index_elements=["id"])
    return sa.insert(AuditEvent)


def write(engine: sa.Engine, rows: list[dict[str, Any]]) -> None:
    """A batch of entries in one transaction of its own (a read of the log releases its request's connection
    before it flushes: ``audit_resources._rows``)."""
    with engine.begin() as conn:
        conn.execute(_insert(engine), rows)


def writer(engine: sa.Engine) -> batches.BatchWriter[dict[str, Any]]:
    """This process's audit writer for ``engine`` (another after a fork)."""
    return batches.writer(engine, "audit-writer", write, interval=INTERVAL, retry=True)


def submit(engine: sa.Engine, entry: AuditEntry) -> None:
    """Queue an entry (dropped and counted in the writer's ``dropped`` once 50,000 wait)."""
    writer(engine).put(row_of(entry))


def prune(engine: sa.Engine, days: int) -> int:
    """Remove entries older than ``days`` (0: keep everything)."""
    if days <= 0:
        return 0
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=days)
    with engine.begin() as conn:
        result = conn.execute(sa.delete(AuditEvent).where(AuditEvent.timestamp < cutoff))
    return int(getattr(result, "rowcount", 0) or 0)
