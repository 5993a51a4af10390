"""Run results and the payloads built from them (``end_vertex`` events, simplified-run response)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.engine.types import Data, DataFrame, Message, jsonable, to_text

__all__ = [
    "RunResult",
    "VertexResult",
    "end_vertex_payload",
    "format_elapsed_time",
    "last_chat_text",
    "output_logs",
    "result_data",
    "shown_messages",
    "shown_outputs",
    "simplified_run_response",
]


def format_elapsed_time(seconds: float) -> str:
    """The reference's human duration: ``"12 ms"``, ``"1.5 seconds"``, ``"2 minutes, 3 seconds"``."""
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 60:
        value = round(seconds, 1)
        return f"{value} {'second' if value == 1 else 'seconds'}"
    minutes = int(seconds // 60)
    rest = round(seconds % 60, 1)
    return f"{minutes} {'minute' if minutes == 1 else 'minutes'}, {rest} seconds"


class VertexResult:
    """What one vertex produced in a run."""

    __slots__ = (
        "display_name",
        "duration",
        "error",
        "id",
        "inactivated",
        "key",
        "logs",
        "messages",
        "outputs",
        "status",
        "stopped_outputs",
        "timedelta",
        "used_frozen_result",
        "valid",
    )

    def __init__(self, id: str, key: str, display_name: str):
        self.id = id
        self.key = key
        self.display_name = display_name
        self.outputs: dict[str, Any] = {}
        self.valid = True
        self.error: str | None = None
        self.logs: list[dict[str, Any]] = []
        self.messages: list[Message] = []
        self.timedelta = 0.0
        self.duration = "0 ms"
        self.used_frozen_result = False
        self.stopped_outputs: set[str] = set()
        self.inactivated: list[str] = []
        self.status: Any = None

    def primary(self) -> tuple[str | None, Any]:
        for name, value in self.outputs.items():
            if name not in self.stopped_outputs:
                return name, value
        return next(iter(self.outputs.items()), (None, None))


class RunResult:
    """The outcome of a run: per-vertex results, order, status and the first error."""

    def __init__(self, run_id: str, session_id: str | None, flow_id: str | None):
        self.run_id = run_id
        self.session_id = session_id
        self.flow_id = flow_id
        self.results: dict[str, VertexResult] = {}
        self.order: list[str] = []
        self.inactivated: list[str] = []
        self.status = "completed"  # completed | failed | cancelled | timed_out | suspended
        self.error: dict[str, Any] | None = None
        #: when suspended: ``{vertex_id, request_id, request, state}``
        self.suspended: dict[str, Any] | None = None
        #: vertices found dead (inactive branches) during the run
        self.inactive: set[str] = set()
        self.build_duration = 0.0
        self.graph: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "completed"

    def output(self, vertex_id: str, output: str | None = None) -> Any:
        vr = self.results[vertex_id]
        if output is None:
            return vr.primary()[1]
        return vr.outputs.get(output)

    def output_vertices(self) -> list[str]:
        if self.graph is None:
            return []
        return [vid for vid in self.order if self.graph.vertices[vid].is_output]

    def answer(self) -> str | None:
        """Text of the last chat/text output vertex, if any (convenience for tests and simple callers)."""
        for vid in reversed(self.output_vertices()):
            value = self.results[vid].primary()[1]
            if value is not None:
                return to_text(value)
        return None


def _log_type(value: Any) -> str:
    if isinstance(value, Message):
        return "text"
    if isinstance(value, Data):
        return "object"
    if isinstance(value, (DataFrame, list, tuple)):
        return "array"
    if isinstance(value, str):
        return "text"
    if isinstance(value, dict):
        return "object"
    return "unknown"


def _log_message(value: Any) -> Any:
    if isinstance(value, Message):
        return jsonable(value.text)
    if isinstance(value, Data):
        return jsonable(value.data)
    return jsonable(value)


def _artifacts(vr: VertexResult) -> dict[str, Any]:
    _name, value = vr.primary()
    if isinstance(value, Message):
        return {
            "message": jsonable(value.text),
            "sender": value.sender,
            "sender_name": value.sender_name,
            "files": list(value.files),
            "type": "text",
        }
    if value is None:
        return {}
    return {"message": _log_message(value), "type": _log_type(value)}


def output_logs(vr: VertexResult) -> dict[str, Any]:
    """``ResultData.outputs``: each output as logged (``{message, type}``), or the vertex's error under each."""
    if vr.valid:
        return {name: {"message": _log_message(v), "type": _log_type(v)} for name, v in vr.outputs.items()}
    return {
        name: {"message": {"errorMessage": vr.error, "stackTrace": ""}, "type": "error"}
        for name in vr.outputs or {"error": None}
    }


def shown_messages(vr: VertexResult) -> list[Message]:
    """The chat messages a vertex's ``ResultData.messages`` shows: its Message outputs that were not stopped."""
    return [v for name, v in vr.outputs.items() if isinstance(v, Message) and name not in vr.stopped_outputs]


def result_data(vr: VertexResult, *, session_id: str | None = None, with_messages: bool = True) -> dict[str, Any]:
    """The reference's ``ResultData`` dict for one vertex."""
    outputs = output_logs(vr)
    results = {name: jsonable(v) for name, v in vr.outputs.items()} if vr.valid else {}
    data: dict[str, Any] = {
        "results": results,
        "artifacts": _artifacts(vr) if vr.valid else {},
        "outputs": outputs,
        # a failed vertex keeps its logs too (under "error", like its outputs): they often say why
        "logs": {name: [dict(entry) for entry in vr.logs] for name in (vr.outputs or outputs)},
        "timedelta": vr.timedelta,
        "duration": vr.duration,
        "component_display_name": vr.display_name,
        "component_id": vr.id,
        "used_frozen_result": vr.used_frozen_result,
        "token_usage": None,
    }
    if with_messages:
        data["messages"] = [
            {
                "message": jsonable(value.text),
                "sender": value.sender,
                "sender_name": value.sender_name,
                "session_id": value.session_id or session_id,
                "stream_url": None,
                "component_id": vr.id,
                "files": list(value.files),
                "type": "text",
            }
            for value in shown_messages(vr)
        ]
    return data


def end_vertex_payload(vr: VertexResult, *, graph: Any, next_ids: list[str]) -> dict[str, Any]:
    """``end_vertex`` event data: ``{build_data, output_meta}`` (reference-api.md section 3)."""
    vertex = graph.vertices[vr.id]
    rd = result_data(vr, with_messages=False)
    data = {
        "results": rd["results"],
        "outputs": rd["outputs"],
        "logs": rd["logs"],
        "message": rd["artifacts"],
        "artifacts": rd["artifacts"],
        "timedelta": vr.timedelta,
        "duration": vr.duration,
        "used_frozen_result": vr.used_frozen_result,
        "token_usage": None,
    }
    if vr.valid:
        _name, primary = vr.primary()
        params = to_text(primary) if isinstance(primary, (Message, str)) else "- Results computed"
    else:
        params = vr.error or "Error"
    output_types: list[str] = []
    for name in vr.outputs:
        out = vertex.cls.output_map().get(name)
        for t in out.types if out is not None else vertex.dynamic_outputs.get(name, []):
            if t not in output_types:
                output_types.append(t)
    return {
        "build_data": {
            "id": vr.id,
            "inactivated_vertices": list(vr.inactivated),
            "next_vertices_ids": list(next_ids),
            "top_level_vertices": list(next_ids),
            "valid": vr.valid,
            "params": params,
            "data": data,
            "timestamp": datetime.now(UTC).isoformat(),
        },
        "output_meta": {
            "component_id": vr.id,
            "display_name": vr.display_name,
            "vertex_type": vertex.key,
            "is_output": vertex.is_output,
            "is_terminal": not vertex.out_edges,
            "output_types": output_types,
        },
    }


def select_output_vertices(result: RunResult, output_type: str = "chat", output_component: str = "") -> list[str]:
    graph = result.graph
    if graph is None:
        return []
    ran = [vid for vid in result.order if vid in result.results]
    if output_component:
        v = graph.find(output_component)
        return [v.id] if v is not None and v.id in result.results else []
    kind = (output_type or "chat").lower()
    if kind == "debug":
        return ran
    return [vid for vid in ran if graph.vertices[vid].is_output and (kind == "any" or kind in vid.lower())]


def simplified_run_response(
    result: RunResult,
    *,
    input_value: str | None = "",
    output_type: str = "chat",
    output_component: str = "",
) -> dict[str, Any]:
    """``{session_id, outputs:[{inputs:{input_value}, outputs:[ResultData...]}]}`` (reference-api.md section 4).

    A failed run still produces the payload; callers check ``result.ok`` first
    and answer 500 with ``result.error`` instead when it failed.
    """
    outs = [
        result_data(vr, session_id=result.session_id) for vr in shown_outputs(result, output_type, output_component)
    ]
    return {
        "session_id": result.session_id,
        "outputs": [{"inputs": {"input_value": input_value if input_value is not None else ""}, "outputs": outs}],
    }


def shown_outputs(result: RunResult, output_type: str = "chat", output_component: str = "") -> list[VertexResult]:
    """The vertex results the simplified run response shows, in run order (valid, not inactivated)."""
    return [
        result.results[vid]
        for vid in select_output_vertices(result, output_type, output_component)
        if result.results[vid].valid and vid not in result.inactivated
    ]


def last_chat_text(result: RunResult) -> str:
    """The text of the last chat message the simplified run response shows ("" when none): a run's answer
    for surfaces that reply with one text, without building the response's ``ResultData``."""
    texts = [jsonable(m.text) for vr in shown_outputs(result) for m in shown_messages(vr)]
    shown = [str(t) for t in texts if t is not None]
    return shown[-1] if shown else ""
