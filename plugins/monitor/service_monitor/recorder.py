"""Vertex builds and transactions are written off the run's path, in batches.

A run hands each record to :meth:`Recorder.submit`, which only puts it into this process's
:class:`core.batches.BatchWriter` (bounded: when it is full the record is dropped and counted: recording must
never slow or fail a run). The writer's thread gathers records for ``interval`` seconds after the first,
inserts the batch in one short transaction, and prunes a flow down to ``keep_per_flow`` rows once a tenth of
that was written for it since its last pruning, in small batches (``FOR UPDATE SKIP LOCKED`` on PostgreSQL,
so concurrent pruners never wait on, or deadlock with, each other). A batch that fails is dropped with a
warning. :meth:`flush` waits until what was submitted is written (tests, reads); the process's end flushes
(``core.jobs.at_exit``: also a forked RQ job process, which RQ ends with ``os._exit``), and a forked process
writes with a writer of its own, never its copy of its parent's queue (the parent writes that).
"""

from __future__ import annotations

import logging
import os
import uuid
from typing import Any

import sqlalchemy as sa

from core import batches, db
from core.contracts import VertexRecord
from core.db import utcnow
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
        #: rows written per (owner, flow) since its last pruning (only the writer's thread touches it)
        self._unpruned: dict[tuple[uuid.UUID, uuid.UUID], int] = {}
        self._writer = self._new_writer()

    def _new_writer(self) -> batches.BatchWriter[VertexRecord]:
        return batches.BatchWriter(
            self.engine, self._write, name="monitor-recorder", interval=self.interval, capacity=self.capacity
        )

    @property
    def writer(self) -> batches.BatchWriter[VertexRecord]:
        """This process's writer (a forked process makes its own: its parent writes what it inherited)."""
        if self._writer.pid != os.getpid():
            self._writer = self._new_writer()
        return self._writer

    @property
    def dropped(self) -> int:
        return self.writer.dropped

    @property
    def written(self) -> int:
        return self.writer.written

    def submit(self, record: VertexRecord) -> None:
        self.writer.put(record)

    def flush(self, timeout: float = 10.0) -> int:
        """Wait until everything submitted so far is written; the number of records written meanwhile."""
        writer = self.writer
        before = writer.written
        writer.flush(timeout)
        return writer.written - before

    def _write(self, engine: sa.Engine, batch: list[VertexRecord]) -> None:
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
        dialect = engine.dialect
        with db.raw(engine, write=True) as conn:
            if builds:
                _insert(VertexBuild, BUILD_COLUMNS).execute_many(builds, conn, dialect)
            _insert(Transaction, TRANSACTION_COLUMNS).execute_many(transactions, conn, dialect)
        for t in transactions:
            owner_flow = (t["user_id"], t["flow_id"])
            self._unpruned[owner_flow] = self._unpruned.get(owner_flow, 0) + 1
        for owner_flow in [f for f, n in self._unpruned.items() if n >= self.prune_every]:
            del self._unpruned[owner_flow]
            try:
                self._prune(*owner_flow)
            except Exception:  # the rows are written; the next pruning of this flow removes the excess
                log.warning("pruning the monitor rows of a flow failed", exc_info=True)

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
        """Write what is queued (a test's recorder; the process's end flushes every writer by itself)."""
        self.flush()
