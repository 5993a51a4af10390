"""The run plugin's part of running flows: its response shapes, stream framing and sessions.

Everything else (lookup, ``check_run``, tweaks, the graph, the run context,
message storage, cancellation) is the core's run service (:mod:`core.runs`);
the views build a :class:`core.runs.RunRequest` and call it.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from core import appstate, runs
from core.contracts import FlowRecord
from core.engine import RunEvent, RunResult, result_data, simplified_run_response
from core.errors import ApiError
from core.runs.wire import frame, is_run_stream_event

log = logging.getLogger(__name__)

Respond = Callable[[list[RunResult]], dict[str, Any]]


def request_vars(header_vars: Mapping[str, str], context: Mapping[str, Any] | None) -> dict[str, str]:
    """Request variables: the body ``context`` (its ``request_variables`` object and its top-level
    string members) merged with the ``X-SERVICE-GLOBAL-VAR-*`` headers, headers winning."""
    merged: dict[str, str] = {}
    if context:
        for key, value in context.items():
            if isinstance(value, str):
                merged[str(key)] = value
        nested = context.get("request_variables")
        if isinstance(nested, Mapping):
            merged.update({str(k): str(v) for k, v in nested.items() if v is not None})
    for key, value in header_vars.items():
        merged[key] = value
        # WSGI cannot tell "-" from "_" in header names (X-SERVICE-GLOBAL-VAR-MY_KEY arrives as MY-KEY):
        # the underscore spelling, the usual one for variable names, is offered too
        if "-" in key:
            merged[key.replace("-", "_")] = value
    return merged


# --- one run ------------------------------------------------------------------------------------
def _answer(outcome: runs.RunOutcome, respond: Respond) -> dict[str, Any]:
    body = respond(outcome.results)
    if outcome.suspended is not None:
        body["suspended"] = {k: outcome.suspended[k] for k in ("request_id", "vertex_id", "request", "expires_at")}
    return body


def run_now(prepared: runs.PreparedRun, respond: Respond) -> dict[str, Any]:
    """Run in the request; 500 naming the failing component when a vertex fails."""
    outcome = runs.execute(prepared)
    if outcome.failed is not None:
        raise ApiError(500, runs.failure_text(outcome.failed))
    return _answer(outcome, respond)


def stream(prepared: runs.PreparedRun, respond: Respond) -> Iterator[bytes]:
    """The v1 run stream: ``add_message``/``token`` as they come, then ``end {result}`` or ``error {error}``.

    A client that goes away cancels the run at the next vertex.
    """
    items = runs.stream(prepared, keep=is_run_stream_event)  # started now, in the request's app context

    def generate() -> Iterator[bytes]:
        for item in items:
            if isinstance(item, RunEvent):
                yield frame(item.name, item.payload()).encode()
            elif isinstance(item, runs.RunOutcome):
                if item.failed is not None:
                    yield frame("error", {"error": runs.failure_text(item.failed)}).encode()
                else:
                    yield frame("end", {"result": _answer(item, respond)}).encode()
            else:  # the run stopped on an unexpected exception (logged by the run service)
                yield frame("error", {"error": "Internal Server Error"}).encode()

    return generate()


# --- response builders ----------------------------------------------------------------------------
def simplified_response(input_value: str | None, output_type: str, output_component: str):
    def respond(results: list[RunResult]) -> dict[str, Any]:
        return simplified_run_response(
            results[0], input_value=input_value, output_type=output_type, output_component=output_component or ""
        )

    return respond


def advanced_response(outputs: list[str] | None, session_id: str, input_values: list[str | None]):
    """``{outputs: [{inputs: {input_value}, outputs: [ResultData]}], session_id}``: one block per input.

    Without ``outputs`` every output component's result is returned; with it, the
    components named (by id or display name) in it, in run order.
    """
    wanted = set(outputs or [])

    def respond(results: list[RunResult]) -> dict[str, Any]:
        blocks = []
        for result, value in zip(results, input_values, strict=False):
            graph = result.graph
            selected = []
            for vid in result.order:
                vertex = graph.vertices[vid]
                hit = (vid in wanted or vertex.display_name in wanted) if wanted else vertex.is_output
                vr = result.results.get(vid)
                if hit and vr is not None and vr.valid and vid not in result.inactivated:
                    selected.append(result_data(vr, session_id=result.session_id))
            blocks.append({"inputs": {"input_value": value if value is not None else ""}, "outputs": selected})
        return {"outputs": blocks, "session_id": session_id}

    return respond


# --- advanced-run sessions --------------------------------------------------------------------------
def _session_key() -> bytes:
    from core.secrets import secret_key

    return hashlib.sha256(b"service-run-session:" + secret_key(appstate.settings()).encode()).digest()


def new_session_id(flow_id: str) -> str:
    """A session id this service issued for ``flow_id`` (verifiable by any process: HMAC, no storage)."""
    nonce = secrets.token_hex(8)
    sig = hmac.new(_session_key(), f"{flow_id}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]
    return f"{nonce}{sig}"


def session_known(user_id: str, flow: FlowRecord, session_id: str) -> bool:
    """An advanced run may continue a session we issued, the flow's default session, or one with history."""
    flow_id = flow.id
    if session_id == flow_id:
        return True
    if len(session_id) == 32:
        nonce, sig = session_id[:16], session_id[16:]
        good = hmac.new(_session_key(), f"{flow_id}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]
        if hmac.compare_digest(sig, good):
            return True
    history = appstate.hooks().message_history(user_id=user_id, flow_id=flow_id, session_id=session_id, limit=1)
    return bool(history)
