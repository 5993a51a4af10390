"""The v2 streams: a live run or a background job's stored events, in the reference framing or AG-UI.

Reference framing (``stream_protocol=service``): ``data: {"event": name, "data": payload}`` then
``id: <n>`` and a blank line; the build events, one ``output`` event per output component, then
``end``. AG-UI (``agui``): :mod:`service_workflows.agui`. A live stream numbers its frames from 0;
a replayed job stream uses the job's event ids, so a client that reconnects with ``Last-Event-ID``
gets exactly what it missed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from flask import current_app

from core import runs
from core.engine import RunEvent
from core.engine.events import RunFailed, RunFinished, VertexFinished, decode
from core.engine.lazy import lazy_import
from core.jobs import END_EVENTS, JobInfo, JobQueue
from core.runs.wire import BUILD_EVENTS
from service_workflows import services

if TYPE_CHECKING:
    from service_workflows import agui
else:  # the AG-UI SDK (pydantic models, about 0.1 s) on the first AG-UI stream, not at start-up
    agui = lazy_import("service_workflows.agui")

#: job states as the v2 API names them
STATUS = {
    "queued": "queued",
    "running": "in_progress",
    "finished": "completed",
    "failed": "failed",
    "cancelled": "cancelled",
    "suspended": "suspended",
}
_ENDS = frozenset(END_EVENTS.values())
_STREAMED = BUILD_EVENTS | {"output"}


def service_frame(name: str, data: Any, seq: Any) -> str:
    return "data: " + json.dumps({"event": name, "data": data}) + f"\nid: {seq}\n\n"


def _public_payload(event: RunEvent) -> tuple[str, Any] | None:
    """What an anonymous caller may see of an event (failures without names or messages)."""
    if isinstance(event, RunFailed):
        return "error", {"error": services.PUBLIC_FAILURE, "text": services.PUBLIC_FAILURE}
    if isinstance(event, VertexFinished) and not event.valid:
        return "end_vertex", {"build_data": {"id": event.vertex_id, "valid": False}}
    return None


# --- live ---------------------------------------------------------------------------------------------
def live(
    prepared: runs.PreparedRun, protocol: str, output_ids: list[str] | None, *, public: bool = False
) -> Iterator[str]:
    """Start ``prepared`` now (in the request's app context) and yield its frames; a client that goes
    away cancels the run. The run's id (AG-UI ``runId``) is its job id: a run that pauses is resumed
    with ``POST /api/v2/workflows/{run id}/resume``."""
    run_id = services.new_run_id()
    if protocol == "agui":
        app = current_app._get_current_object()  # type: ignore[attr-defined]

        def start() -> Iterator[Any]:
            with app.app_context():  # the run's thread pushes its own context
                return runs.stream(prepared, job_id=run_id)

        return _live_agui(prepared, start, public, run_id)
    items = runs.stream(prepared, keep=lambda e: e.name in BUILD_EVENTS, job_id=run_id)
    return _live_service(items, output_ids, public)


def _live_service(items: Iterator[Any], output_ids: list[str] | None, public: bool) -> Iterator[str]:
    seq = 0
    held: list[RunEvent] = []
    for item in items:
        if isinstance(item, RunFinished):
            held.append(item)
            continue
        if isinstance(item, RunEvent):
            masked = _public_payload(item) if public else None
            name, data = masked if masked is not None else (item.name, item.payload())
            yield service_frame(name, data, seq)
            seq += 1
        elif isinstance(item, runs.RunOutcome):
            for data in services.output_events(item, output_ids):
                yield service_frame("output", data, seq)
                seq += 1
            for event in held:
                yield service_frame(event.name, event.payload(), seq)
                seq += 1
        else:  # the run stopped on an unexpected exception (logged by the run service)
            yield service_frame("error", {"error": services.PUBLIC_FAILURE, "text": services.PUBLIC_FAILURE}, seq)
            seq += 1


def _live_agui(
    prepared: runs.PreparedRun, start: Callable[[], Iterator[Any]], public: bool, run_id: str
) -> Iterator[str]:
    """``RUN_STARTED`` is written before the run's thread starts: the first frame never waits for it."""
    req = prepared.request
    translator = agui.Translator(req.session_id or prepared.flow_id, run_id, public=public)
    seq = 0
    for event in translator.started():
        yield agui.frame(event, seq)
        seq += 1
    for item in start():
        if isinstance(item, RunEvent):
            out: Iterator[Any] = translator.translate(item)
        elif isinstance(item, runs.RunOutcome):
            if item.status == "cancelled":
                out = translator.job_end("cancelled", None)
            elif item.failed is not None:
                out = translator.error(services.PUBLIC_FAILURE if public else runs.failure_text(item.failed))
            else:
                out = translator.finished()
        else:
            out = translator.error(services.PUBLIC_FAILURE)
        for event in out:
            yield agui.frame(event, seq)
            seq += 1


# --- background jobs ----------------------------------------------------------------------------------
def replay(jobs: JobQueue, info: JobInfo, protocol: str, after: str | None, block: float = 5.0) -> Iterator[str]:
    """A job's stored events after cursor ``after`` (None: from the start) until its end event."""
    translator = None
    if protocol == "agui":
        translator = agui.Translator(str(info.meta.get("session_id") or info.id), info.id, job_id=info.id)
        if after is None:
            for event in translator.started():
                yield agui.frame(event, "start")
    cursor = after
    while True:
        batch = jobs.read_events(info.id, cursor, block_seconds=block)
        for stored in batch:
            cursor = stored.id
            yield from _stored_frames(translator, stored)
        if batch and batch[-1].name in _ENDS:
            current = jobs.info(info.id)
            if current is None or current.state.terminal:
                return
        if not batch:
            current = jobs.info(info.id)
            if current is None:
                return
            if current.state.terminal:
                # the end event may have been written between the read and this check
                rest = jobs.read_events(info.id, cursor)
                for stored in rest:
                    yield from _stored_frames(translator, stored)
                return


def _stored_frames(translator: agui.Translator | None, stored: Any) -> Iterator[str]:
    if translator is None:
        if stored.name in _STREAMED or stored.name in ("cancelled", "suspended"):
            yield service_frame(stored.name, stored.data, stored.id)
        elif stored.name == "finished":
            return
        return
    typed = decode(stored.name, stored.data)
    if typed is not None and stored.name != "suspended":
        events: Iterator[Any] = translator.translate(typed)
    elif stored.name in ("finished", "cancelled", "suspended"):
        events = translator.job_end(stored.name, stored.data)
    else:
        return
    for event in events:
        yield agui.frame(event, stored.id)


def status(info: JobInfo) -> dict[str, Any]:
    """``GET /api/v2/workflows?job_id=``: the v2 response once ended, its status before."""
    name = STATUS.get(info.state.value, info.state.value)
    flow_id = str(info.meta.get("flow_id") or "")
    if info.state.value == "finished" and isinstance(info.result, dict):
        return info.result
    if info.state.value in ("queued", "running"):
        return {
            "job_id": info.id,
            "flow_id": flow_id,
            "object": "job",
            "status": name,
            "created_timestamp": services.now_iso(),
            "errors": [],
        }
    outcome = None
    if info.state.value == "suspended" and isinstance(info.result, dict):
        outcome = runs.RunOutcome([], suspended=info.result)
    return services.response(
        outcome,
        flow_id=flow_id,
        session_id=None,
        job_id=info.id,
        status=name,
        error=info.error if info.state.value == "failed" else None,
    )


def pending_item(cp: Any) -> dict[str, Any]:
    return {
        "request_id": cp.id,
        "job_id": cp.job_id,
        "flow_id": cp.flow_id,
        "vertex_id": cp.vertex_id,
        "request": json.loads(cp.request),
        "created_at": cp.created_at.isoformat() if cp.created_at else None,
        "expires_at": cp.expires_at.isoformat() if cp.expires_at else None,
    }
