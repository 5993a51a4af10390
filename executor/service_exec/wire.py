"""The run responses the executor answers with, in the reference's shapes.

* v1 simplified run: :func:`core.engine.simplified_run_response`; streamed as the v1 run stream
  (``{"event", "data"}`` objects separated by a blank line: ``add_message``, ``token``, then
  ``end {result}`` or ``error {error}``);
* v2 workflows (``POST /api/v2/workflows``): the sync response, and the ``service`` stream
  protocol (``data: {"event", "data"}`` then ``id: <n>``).

The full service's adapters live in its plugins (which need its web stack); these few lines
are written again here so the executor imports the engine only.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from core.engine import RunEvent, RunResult
from core.engine.types import to_text

#: events the v1 run stream forwards while the run goes
RUN_STREAM_EVENTS = frozenset({"add_message", "token"})
#: events the v2 ``service`` stream forwards (the build events)
V2_STREAM_EVENTS = frozenset({"vertices_sorted", "build_start", "end_vertex", "add_message", "token", "error"})


def frame(name: str, data: Any) -> str:
    """One v1 stream event: a bare JSON object and a blank line."""
    return json.dumps({"event": name, "data": data}) + "\n\n"


def sse(name: str, data: Any, seq: int) -> str:
    """One v2 ``service`` stream event: the data line first, then the id."""
    return f"data: {json.dumps({'event': name, 'data': data})}\nid: {seq}\n\n"


def event_frame(event: RunEvent) -> str:
    return frame(event.name, event.payload())


def _outputs(result: RunResult) -> dict[str, dict[str, Any]]:
    graph = result.graph
    outs: dict[str, dict[str, Any]] = {}
    for vid in result.output_vertices():
        vr = result.results[vid]
        if not vr.valid or vid in result.inactivated:
            continue
        _name, value = vr.primary()
        outs[vid] = {
            "type": "message",
            "status": "completed",
            "display_name": vr.display_name,
            "content": to_text(value) if value is not None else None,
            "metadata": {"component_type": graph.vertices[vid].key if graph is not None else vr.key},
        }
    return outs


def output_events(result: RunResult) -> list[dict[str, Any]]:
    """The v2 stream's ``output`` events: one per output component."""
    return [{**out, "component_id": vid} for vid, out in _outputs(result).items()]


def v2_response(result: RunResult, flow_id: str, session_id: str | None, error: str | None = None) -> dict[str, Any]:
    """The v2 sync response (reference-api.md section 6)."""
    outs = _outputs(result)
    texts = [(vid, o["content"]) for vid, o in outs.items()]
    if error is not None:
        output: dict[str, Any] = {"reason": "failed", "text": None, "source": None}
    elif not texts:
        output = {"reason": "none", "text": None, "source": None}
    elif len(texts) > 1:
        output = {"reason": "multiple", "text": texts[-1][1], "source": texts[-1][0]}
    elif not isinstance(texts[0][1], str):
        output = {"reason": "non_string", "text": None, "source": texts[0][0]}
    else:
        output = {"reason": "single", "text": texts[0][1], "source": texts[0][0]}
    return {
        "flow_id": flow_id,
        "session_id": session_id or flow_id,
        "job_id": str(uuid.uuid4()),
        "object": "response",
        "created_timestamp": dt.datetime.now(dt.UTC).isoformat(),
        "status": "failed" if error is not None else "completed",
        "output": output,
        "errors": [{"message": error}] if error is not None else [],
        "warnings": [],
        "inputs": {},
        "globals": {},
        "outputs": outs,
        "human_request": None,
        "has_errors": error is not None,
    }
