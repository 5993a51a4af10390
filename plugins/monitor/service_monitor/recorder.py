"""Vertex builds and transactions are written off the run's path, in batches.

A run hands each record to :meth:`Recorder.submit`, which only appends to a
bounded in-memory queue (when it is full the record is dropped and counted:
recording must never slow or fail a run). One writer thread per process
drains the queue every ``interval`` seconds, inserts a batch in one short
transaction, and prunes a flow down to ``keep_per_flow`` rows once a tenth of
that was written for it since its last pruning, in small batches (``FOR
UPDATE SKIP LOCKED`` on PostgreSQL, so concurrent pruners never wait on, or
deadlock with, each other). :meth:`flush` drains
synchronously (tests, shutdown); the process's end flushes (``core.jobs.at_exit``: also a forked RQ job
process, which RQ ends with ``os._exit``).
"""

from __future__ import annotations

import collections
import logging
import threading
import uuid
from typing import Any

import sqlalchemy as sa

from core import db
from core.contracts import VertexRecord
from core.db import utcnow
from core.jobs import at_exit
from service_monitor.models import Transaction, VertexBuild

log = logging.getLogger(__name__)


BUILD_COLUMNS = ("build_id", "id", "user_id", "flow_id", "job_id", "timestamp", "valid", "data", "artifacts", "params")
TRANSACTION_COLUMNS = (
    "id", "user_id", "flow_id", "timestamp", "vertex_id", "target_id", "inputs", "outputs", "status", "error",
)  # fmt: skip
_inserts: dict[Any, db.Prepared] = {}


def _insert(model: Any, columns: tuple[str, ...]) -> db.Prepared:
    found = _inserts.get(model)
    if found is None:
        found = _inserts[model] = db.Prepared(sa.insert(model.__table__), column_keys=list(columns))
    return found


# Both filter on the owner as well as the flow: the tables' index is (user_id, flow_id, timestamp), and
# with the flow alone the database walked every owner's rows (and sorted them) on every pruning.
def count_statement(model: Any, user_id: uuid.UUID, flow_id: uuid.UUID) -> sa.Select[Any]:
    """How many rows ``model`` keeps for one owner's flow."""
    return sa.select(sa.func.count()).select_from(model).where(model.user_id == user_id, model.flow_id == flow_id)


def oldest_statement(model: Any, key: Any, user_id: uuid.UUID, flow_id: uuid.UUID, n: int) -> sa.Select[Any]:
    """The keys of the ``n`` oldest rows ``model`` keeps for one owner's flow."""
    return sa.select(key).where(model.user_id == user_id, model.flow_id == flow_id).order_by(model.timestamp).limit(n)


class Recorder:
    def __init__(
        self,
        engine: sa.Engine,
        *,
        capacity: int = 10_000,
        interval: float = 0.25,
        keep_per_flow: int = 1000,
        prune_batch: int = 500,
        prune_every: int | None = None,
    ) -> None:
        self.engine = engine
        self.capacity = capacity
        self.interval = interval
        self.keep_per_flow = keep_per_flow
        self.prune_batch = prune_batch
        #: a flow is pruned once this many of its rows were written since its last pruning (a tenth of
        #: ``keep_per_flow``): counting a flow's rows on every flush cost more than the inserts, and the
        #: flush runs in a web worker, where it holds every request of that worker while it writes
        self.prune_every = max(1, prune_every if prune_every is not None else keep_per_flow // 10)
        #: rows written per (owner, flow) since its last pruning
        self._unpruned: dict[tuple[uuid.UUID, uuid.UUID], int] = {}
        self._queue: collections.deque[VertexRecord] = collections.deque()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopped = False
        self.dropped = 0
        self.written = 0
        self._thread: threading.Thread | None = None
        at_exit(self.close)

    def submit(self, record: VertexRecord) -> None:
        with self._lock:
            if len(self._queue) >= self.capacity:
                self.dropped += 1
                return
            self._queue.append(record)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="monitor-recorder", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while not self._stopped:
            self._wake.wait(self.interval)
            self._wake.clear()
            try:
                self.flush()
            except Exception:  # keep the writer alive; the batch is lost, the service is not
                log.exception("writing vertex builds failed")

    def flush(self) -> int:
        """Write everything queued now; returns the number of records written."""
        with self._lock:
            batch = list(self._queue)
            self._queue.clear()
        if not batch:
            return 0
        builds: list[dict[str, Any]] = []
        transactions: list[dict[str, Any]] = []
        for r in batch:
            user_id, flow_id = uuid.UUID(str(r.user_id)), uuid.UUID(str(r.flow_id))
            stamp = r.timestamp or utcnow()
            if r.build:
                builds.append(
                    {
                        "build_id": db.new_id(),
                        "id": str(r.vertex_id or ""),
                        "user_id": user_id,
                        "flow_id": flow_id,
                        "job_id": r.job_id,
                        "timestamp": stamp,
                        "valid": bool(r.valid),
                        "data": r.data or {},
                        "artifacts": r.artifacts or {},
                        "params": r.params,
                    }
                )
            transactions.append(
                {
                    "id": db.new_id(),
                    "user_id": user_id,
                    "flow_id": flow_id,
                    "timestamp": stamp,
                    "vertex_id": str(r.vertex_id or ""),
                    "target_id": r.target_id,
                    "inputs": r.inputs or {},
                    "outputs": r.outputs or {},
                    "status": "success" if r.valid else "error",
                    "error": r.error,
                }
            )
        # on the driver (core.db.Prepared): through Connection.execute the execution layer cost about
        # as much as the rows' own JSON encoding and SQLite work
        dialect = self.engine.dialect
        with db.raw(self.engine, write=True) as conn:
            if builds:
                _insert(VertexBuild, BUILD_COLUMNS).execute_many(builds, conn, dialect)
            _insert(Transaction, TRANSACTION_COLUMNS).execute_many(transactions, conn, dialect)
        self.written += len(batch)
        for t in transactions:
            owner_flow = (t["user_id"], t["flow_id"])
            self._unpruned[owner_flow] = self._unpruned.get(owner_flow, 0) + 1
        for owner_flow in [f for f, n in self._unpruned.items() if n >= self.prune_every]:
            del self._unpruned[owner_flow]
            self._prune(*owner_flow)
        return len(batch)

    def _prune(self, user_id: uuid.UUID, flow_id: uuid.UUID) -> None:
        for model, key in ((VertexBuild, VertexBuild.build_id), (Transaction, Transaction.id)):
            with self.engine.begin() as conn:
                total = conn.scalar(count_statement(model, user_id, flow_id))
                excess = (total or 0) - self.keep_per_flow
                if excess <= 0:
                    continue
                oldest = oldest_statement(model, key, user_id, flow_id, min(excess, self.prune_batch))
                if conn.dialect.name == "postgresql":
                    oldest = oldest.with_for_update(skip_locked=True)
                ids = list(conn.scalars(oldest))
                if ids:
                    conn.execute(sa.delete(model).where(key.in_(ids)))

    def close(self) -> None:
        self._stopped = True
        self._wake.set()
        try:
            self.flush()
        except Exception:  # at exit the database may already be gone
            log.warning("could not flush vertex builds at shutdown", exc_info=True)
