"""The v2 workflows surface's logic (no request objects): bodies to run requests, outcomes to responses.

* :func:`translate_legacy`: the 1.10 body (``background``, ``inputs`` as ``<component id>.<parameter>``)
  as a 1.11 body;
* :func:`run_request`: a 1.11 body as a :class:`core.runs.RunRequest`;
* :func:`response`: a :class:`core.runs.RunOutcome` as the reference's v2 response object;
* :func:`output_events`: the ``output`` frames of the reference framing (one per output component).
"""

from __future__ import annotations

import datetime as dt
import uuid
from typing import Any

from core import runs
from core.engine import RunResult
from core.engine.types import Data, DataFrame, Message, jsonable

#: what anonymous callers see of a failure (no component names, messages or stacks)
PUBLIC_FAILURE = "Flow execution failed"


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat()


def not_found(flow_id: str) -> dict[str, Any]:
    """The reference's 404 detail of an unknown (or foreign) flow."""
    return {
        "error": "Flow not found",
        "code": "FLOW_NOT_FOUND",
        "message": f"Flow {flow_id} not found",
        "flow_id": flow_id,
    }


def job_not_found(job_id: str) -> dict[str, Any]:
    return {"error": "Job not found", "code": "JOB_NOT_FOUND", "message": f"Job {job_id} not found", "job_id": job_id}


# --- requests -----------------------------------------------------------------------------------------
def translate_legacy(body: dict[str, Any]) -> dict[str, Any]:
    """A 1.10 body as a 1.11 one: ``inputs`` ``{"<id>.<param>": v}`` become tweaks ``{id: {param: v}}``."""
    tweaks: dict[str, dict[str, Any]] = {}
    input_value = ""
    components: list[str] = []
    for key, value in (body.get("inputs") or {}).items():
        component, _, param = str(key).partition(".")
        if param == "input_value" and component and not components:
            # the run's input, given to that input component (a tweak of it would clash with the input)
            input_value, components = ("" if value is None else str(value)), [component]
            continue
        if not component or not param:
            # 1.10 also accepted a bare ``input_value``: the chat input's value
            if key == "input_value":
                input_value = "" if value is None else str(value)
                continue
            from core.errors import validation_error

            raise validation_error(["body", "inputs", str(key)], "Keys must be '<component id>.<parameter>'")
        tweaks.setdefault(component, {})[param] = value
    mode = "background" if body.get("background") else ("stream" if body.get("stream") else "sync")
    return {
        "flow_id": body["flow_id"],
        "input_value": input_value,
        "session_id": body.get("session_id"),
        "mode": mode,
        "stream_protocol": "service",
        "tweaks": tweaks or None,
        "output_ids": None,
        "globals": None,
        "start_component_id": None,
        "stop_component_id": None,
        "idempotency_key": None,
        "data": None,
        "files": None,
        "input_components": components or None,
    }


def run_request(body: dict[str, Any], user_id: str, request_vars: dict[str, str]) -> runs.RunRequest:
    return runs.RunRequest(
        flow=str(body["flow_id"]),
        user_id=user_id,
        surface="workflows",
        inputs=[runs.RunInput(body.get("input_value") or "", "chat", body.get("input_components"))],
        tweaks=body.get("tweaks") or None,
        session_id=body.get("session_id") or None,
        request_vars={**request_vars, **(body.get("globals") or {})},
        data=body.get("data"),
        files=body.get("files"),
        start_component_id=body.get("start_component_id"),
        stop_component_id=body.get("stop_component_id"),
    )


# --- responses ----------------------------------------------------------------------------------------
def _content(value: Any) -> tuple[str, Any]:
    """``(type, content)`` of a component's primary output."""
    if isinstance(value, Message):
        return "message", value.text if isinstance(value.text, str) else jsonable(value.text)
    if isinstance(value, DataFrame):
        return "dataframe", jsonable(value)
    if isinstance(value, Data):
        return "data", jsonable(value.data)
    if isinstance(value, str):
        return "text", value
    return "data", jsonable(value)


def component_outputs(result: RunResult, output_ids: list[str] | None) -> dict[str, dict[str, Any]]:
    """``{component id: {type, status, display_name, content, metadata}}`` of the output components."""
    ids = [vid for vid in (output_ids or []) if vid in result.results] if output_ids else result.output_vertices()
    out: dict[str, dict[str, Any]] = {}
    for vid in ids:
        vr = result.results.get(vid)
        if vr is None or not vr.valid or vid in result.inactivated:
            continue
        kind, content = _content(vr.primary()[1])
        out[vid] = {
            "type": kind,
            "status": "completed",
            "display_name": vr.display_name,
            "content": content,
            "metadata": {"component_type": vr.key},
        }
    return out


def _output(outputs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    if not outputs:
        return {"reason": "none", "text": None, "source": None}
    source, last = list(outputs.items())[-1]
    text = last["content"] if isinstance(last["content"], str) else None
    if len(outputs) > 1:
        return {"reason": "multiple", "text": text, "source": source}
    return {"reason": "single" if text is not None else "non_string", "text": text, "source": source}


def response(
    outcome: runs.RunOutcome | None,
    *,
    flow_id: str,
    session_id: str | None,
    job_id: str | None,
    output_ids: list[str] | None = None,
    globals_: dict[str, Any] | None = None,
    public: bool = False,
    status: str | None = None,
    error: str | None = None,
) -> dict[str, Any]:
    """The reference's v2 response object (sync, and a background job's result)."""
    result = outcome.results[-1] if outcome is not None and outcome.results else None
    outputs = component_outputs(result, output_ids) if result is not None else {}
    state = status or (outcome.status if outcome is not None else "failed")
    errors: list[dict[str, Any]] = []
    output = _output(outputs)
    failed = outcome.failed if outcome is not None else None
    if failed is not None or error is not None:
        info = (failed.error if failed is not None else None) or {}
        detail = error or (runs.failure_text(failed) if failed is not None else "")
        message = PUBLIC_FAILURE if public else detail
        entry: dict[str, Any] = {"message": message, "type": state}
        if not public and info.get("vertex_id"):
            entry["component_id"] = info["vertex_id"]
        errors.append(entry)
        output = {"reason": "failed", "text": message, "source": None if public else info.get("vertex_id")}
    human = None
    if outcome is not None and outcome.suspended is not None:
        s = outcome.suspended
        human = {"request_id": s["request_id"], "vertex_id": s["vertex_id"], "request": s["request"]}
    return {
        "flow_id": flow_id,
        "session_id": (result.session_id if result is not None else None) or session_id or flow_id,
        "job_id": job_id,
        "object": "response",
        "created_timestamp": now_iso(),
        "status": state,
        "output": output,
        "errors": errors,
        "warnings": [],
        "inputs": {},
        "globals": dict(globals_ or {}),
        "outputs": outputs,
        "human_request": human,
        "has_errors": bool(errors),
    }


def output_events(outcome: runs.RunOutcome, output_ids: list[str] | None) -> list[dict[str, Any]]:
    """The reference framing's ``output`` event data, one per output component."""
    result = outcome.results[-1] if outcome.results else None
    if result is None or outcome.failed is not None:
        return []
    return [{**item, "component_id": vid} for vid, item in component_outputs(result, output_ids).items()]


def background_response(job_id: str, flow_id: str, globals_: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "job_id": job_id,
        "flow_id": flow_id,
        "object": "job",
        "created_timestamp": now_iso(),
        "status": "queued",
        "links": {
            "status": f"/api/v2/workflows?job_id={job_id}",
            "events": f"/api/v2/workflows/{job_id}/events",
            "stop": "/api/v2/workflows/stop",
        },
        "errors": [],
        "globals": dict(globals_ or {}),
    }


def new_run_id() -> str:
    return str(uuid.uuid4())
