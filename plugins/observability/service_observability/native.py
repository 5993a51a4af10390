"""Native traces (``SERVICE_NATIVE_TRACING``): each run's trace and spans, stored in one row when it ends.

Spans: one per component (top level, as the reference's trace view shows them) and one per model call
(a child of the component that made it, with the provider's token counts). The run's thread only queues
the row: a writer thread per process writes what is queued in one transaction (``core.groupcommit``), so
a run adds one row and no commit of its own; reads of this process (the traces API, budgets) flush first.
Traces older than ``SERVICE_NATIVE_TRACING_RETENTION_DAYS`` are deleted now and then by a writer.
"""

from __future__ import annotations

import datetime as dt
import logging
import random
import threading
import time
import uuid
from typing import Any, cast

import sqlalchemy as sa

from core import batches, db, groupcommit
from core.contracts import RunEnded, RunStarted
from core.engine.observe import ComponentEnd, ModelCall
from service_observability.models import Trace, Usage

log = logging.getLogger(__name__)

_TABLE = cast(sa.Table, Trace.__table__)
_INSERT = db.Prepared(sa.insert(_TABLE), column_keys=[c.key for c in _TABLE.columns])
_USAGE = cast(sa.Table, Usage.__table__)
_USAGE_INSERT = db.Prepared(sa.insert(_USAGE), column_keys=[c.key for c in _USAGE.columns])
#: model -> (price of a million input tokens, of a million output tokens): ``SERVICE_TOKEN_PRICES``
prices: dict[str, tuple[float, float]] = {}
#: a writer prunes after this many writes (per process)
PRUNE_EVERY = 200
_writes = 0
_writes_lock = threading.Lock()

#: RunEnded status -> the reference's span status (unset, ok, error)
STATUS = {"ok": "ok", "error": "error", "cancelled": "error", "paused": "unset"}


def _span_id() -> str:
    """A random span id in UUID form (``uuid.uuid4()`` costs four times as much, on every component)."""
    h = f"{random.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _when(epoch: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(epoch, tz=dt.UTC)


class NativeTrace:
    """The spans of one run, collected in memory while it goes."""

    __slots__ = ("budgeted", "engine", "open", "retention_days", "run", "spans")

    def __init__(self, run: RunStarted, engine: sa.Engine, retention_days: int) -> None:
        self.run = run
        self.engine = engine
        self.retention_days = retention_days
        self.spans: list[dict[str, Any]] = []
        self.open: dict[int, list[str]] = {}  # thread -> the ids of its components running now
        self.budgeted = False  # the run counts against a budget: its trace (and usage) is written as it ends

    def component(self, vertex_id: str, display_name: str, component_type: str) -> ComponentEnd:
        span: dict[str, Any] = {
            "id": _span_id(),
            "parent": None,
            "name": display_name or component_type,
            "type": "chain",
            "status": "unset",
            "start": time.time(),
            "end": None,
            "error": None,
            "attributes": {"component.id": vertex_id, "component.type": component_type},
        }
        self.spans.append(span)
        stack = self.open.setdefault(threading.get_ident(), [])
        stack.append(span["id"])

        def end(status: str, error: str | None) -> None:
            span["end"] = time.time()
            span["status"] = STATUS.get(status, "unset")
            span["error"] = error
            if stack and stack[-1] == span["id"]:
                stack.pop()

        return end

    def model_call(self, call: ModelCall) -> None:
        stack = self.open.get(threading.get_ident())
        # the one GenAI mapping every exporter uses (texts withheld: native traces never keep them)
        attributes: dict[str, Any] = call.genai_attributes()
        self.spans.append(
            {
                "id": _span_id(),
                "parent": stack[-1] if stack else None,
                "name": f"chat {call.model}",
                "type": "llm",
                "status": "error" if call.error else "ok",
                "start": call.started_at,
                "end": call.started_at + call.duration_s,
                "error": call.error,
                "attributes": attributes,
            }
        )

    def finish(self, ended: RunEnded) -> None:
        """Write the trace (one row, in the group commit)."""
        run = self.run
        tokens = sum(
            int(s["attributes"].get("gen_ai.usage.input_tokens") or 0)
            + int(s["attributes"].get("gen_ai.usage.output_tokens") or 0)
            for s in self.spans
            if s["type"] == "llm"
        )
        inputs = run.request.get("inputs") or []
        first = inputs[0].get("value") if inputs and isinstance(inputs[0], dict) else None
        text = next((o for o in ended.outputs if o), None)
        row = {
            "id": run.run_id,
            "user_id": str(run.owner_id or run.user_id),
            "flow_id": run.flow_id,
            "name": (run.flow_name or run.flow_id)[:255],
            "status": STATUS.get(ended.status, "unset"),
            "surface": run.surface[:32],
            "session_id": (run.session_id or run.flow_id)[:255],
            "start_time": _when(run.started_at),
            "end_time": _when(run.started_at + ended.duration_s),
            "total_latency_ms": round(ended.duration_s * 1000),
            "total_tokens": tokens,
            "input": {"input_value": first} if first else None,
            "output": {"message": text} if text else None,
            "error": ended.error,
            "spans": [_stored(s) for s in self.spans],
        }
        item = (row, self.usage_rows(), self.retention_days)
        if self.budgeted:
            # its use counts against the next run's admission on every worker: stored before the run answers
            # (in this thread, on its session's connection if it holds one), or the next run on another worker
            # would be let in and stopped at its first model call instead of refused with 429
            try:
                _write(self.engine, [item])
                return
            except Exception:
                log.warning("run %s: its trace could not be written now; queued", run.run_id, exc_info=True)
        queue = writer(self.engine)
        queue.put(item)
        if run.job_id:  # a job's process may end with the job (an RQ work-horse): written before it returns
            queue.flush()

    def usage_rows(self) -> list[dict[str, Any]]:
        """One row per provider and model the run called (calls, tokens, cost from the price table)."""
        totals: dict[tuple[str, str], list[int]] = {}
        for span in self.spans:
            if span["type"] != "llm":
                continue
            attributes = span["attributes"]
            key = (str(attributes.get("gen_ai.provider.name") or ""), str(attributes.get("gen_ai.request.model") or ""))
            found = totals.setdefault(key, [0, 0, 0])
            found[0] += 1
            found[1] += int(attributes.get("gen_ai.usage.input_tokens") or 0)
            found[2] += int(attributes.get("gen_ai.usage.output_tokens") or 0)
        if not totals:
            return []
        run = self.run
        project = _project_of(run)
        now = dt.datetime.now(dt.UTC)
        return [
            {
                "id": str(uuid.uuid4()),
                "run_id": run.run_id,
                "user_id": str(run.owner_id or run.user_id),
                "flow_id": run.flow_id,
                "project_id": project,
                "provider": provider[:64],
                "model": model[:255],
                "created_at": now,
                "calls": calls,
                "input_tokens": tokens_in,
                "output_tokens": tokens_out,
                "cost": cost(model, tokens_in, tokens_out),
            }
            for (provider, model), (calls, tokens_in, tokens_out) in totals.items()
        ]


def cost(model: str, tokens_in: int, tokens_out: int) -> float:
    """The price of the tokens (``SERVICE_TOKEN_PRICES``: per million; 0 for a model it does not list)."""
    price = prices.get(model)
    if price is None:
        return 0.0
    return round((tokens_in * price[0] + tokens_out * price[1]) / 1_000_000, 8)


def _project_of(run: RunStarted) -> str | None:
    """The flow's project (folder), for per-project usage and budgets."""
    from core import appstate

    try:
        flow = appstate.hooks().find_flow(
            user_id=str(run.owner_id or run.user_id), flow_id_or_name=run.flow_id, public=False
        )
    except Exception:  # an unsaved graph, a deleted flow: no project
        return None
    return str(flow.folder_id) if flow is not None and flow.folder_id else None


def _stored(span: dict[str, Any]) -> dict[str, Any]:
    end = span["end"]
    return {
        "id": span["id"],
        "parent": span["parent"],
        "name": span["name"],
        "type": span["type"],
        "status": span["status"],
        "start": span["start"],
        "end": end,
        "latency_ms": round((end - span["start"]) * 1000) if end is not None else 0,
        "error": span["error"],
        "attributes": span["attributes"],
    }


#: one queued trace: its row, its usage rows, the retention (days) its pruning keeps
Queued = tuple[dict[str, Any], list[dict[str, Any]], int]


def _write(engine: sa.Engine, batch: list[Queued]) -> None:
    """A batch of traces and their usage rows in one transaction (through the group commit)."""
    traces = [row for row, _usage, _days in batch]
    usage = [u for _row, rows, _days in batch for u in rows]
    groupcommit.submit(engine, [(_INSERT, traces), (_USAGE_INSERT, usage)])
    for _ in batch:
        _maybe_prune(engine, batch[-1][2])


def writer(engine: sa.Engine) -> batches.BatchWriter[Queued]:
    """This process's trace writer for ``engine``: traces are written in batches, off the runs' threads; a batch
    that cannot be stored is dropped with a warning (a trace never fails a run); ``flush()`` waits until what
    was queued is written (reads call it)."""
    return batches.writer(engine, "native-traces", _write)


def _maybe_prune(engine: sa.Engine, retention_days: int) -> None:
    global _writes
    with _writes_lock:
        _writes += 1
        due = _writes % PRUNE_EVERY == 0
    if due:
        prune(engine, retention_days)


def prune(engine: sa.Engine, retention_days: int) -> int:
    """Delete the traces older than ``retention_days``; how many were deleted."""
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(days=retention_days)
    with engine.begin() as conn:
        return int(conn.execute(sa.delete(_TABLE).where(_TABLE.c.start_time < cutoff)).rowcount or 0)
