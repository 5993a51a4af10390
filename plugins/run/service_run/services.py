"""Running flows for the HTTP surfaces and the webhook job (no Flask routing here).

Every run goes through :func:`core.runs.make_context`, so variables, sub-flows,
message storage (``on_messages``) and vertex records reach the plugins that
answer those hooks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import queue
import secrets
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app

from core.app import state
from core.engine import Graph, GraphValidationError, RunResult, result_data, run_graph, simplified_run_response
from core.errors import ApiError, ValidationFailed
from core.runs import make_context, registry

log = logging.getLogger(__name__)

#: events of the engine a streamed run forwards (the reference's stream kinds)
STREAMED_EVENTS = frozenset({"add_message", "token"})


# --- flows ---------------------------------------------------------------------------------------
def find_flow(user_id: str | None, flow_id_or_name: str) -> dict[str, Any]:
    """The caller's flow by id or endpoint name; 404 ``Flow identifier X not found`` otherwise."""
    flow: dict[str, Any] | None = state().host.hook.find_flow(
        user_id=user_id, flow_id_or_name=flow_id_or_name, public=False
    )
    if flow is None or not isinstance(flow.get("data"), Mapping):
        raise ApiError(404, f"Flow identifier {flow_id_or_name} not found")
    return flow


def build_graph(flow: Mapping[str, Any], tweaks: Mapping[str, Any] | None = None) -> Graph:
    """Validate and build the flow; a bad graph is a 422 naming node and field."""
    try:
        return Graph.build(flow["data"], registry(), tweaks=tweaks or None)
    except GraphValidationError as exc:
        raise ValidationFailed(list(exc.errors)) from None


def failure_text(result: RunResult) -> str:
    """The 500 message of a failed run: the failing component and its error, never a traceback."""
    error = result.error or {}
    if result.status == "timed_out":
        return "Run time limit exceeded"
    if result.status == "cancelled":
        return "Run cancelled"
    name = error.get("display_name") or "component"
    vid = error.get("vertex_id")
    where = f"{name} ({vid})" if vid else name
    return f"Error running component {where}: {error.get('message') or 'failed'}"


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
@dataclass
class RunSpec:
    """Everything a run needs, resolved from the request while it is still available."""

    user_id: str
    flow: dict[str, Any]
    graph: Graph
    session_id: str | None = None
    request_vars: dict[str, str] = field(default_factory=dict)
    #: one run per item: (input_value, input_type, input_components, session)
    inputs: list[tuple[str | None, str, list[str] | None, str | None]] = field(default_factory=list)
    respond: Callable[[list[RunResult]], dict[str, Any]] = lambda results: {}


def _batch_messages(ctx: Any, user_id: str) -> Callable[[], None]:
    """Store a run's chat messages with one ``on_messages`` call (one transaction) instead of one per message.

    Messages are collected while the run goes and handed over when it ends (also when it fails or
    is cancelled), still inside the request or job; a history read during the run (Message History)
    flushes what is pending first, so it sees them. ``add_message`` events are not delayed.
    """
    if ctx.store_message is None:
        return lambda: None
    hook = state().host.hook
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            batch = list(pending)
            pending.clear()
            hook.on_messages(user_id=user_id, messages=batch)

    def collect(message: dict[str, Any]) -> None:
        pending.append(message)

    read = ctx.get_messages

    def get_messages(*args: Any) -> list[dict[str, Any]]:
        flush()
        return read(*args) if read is not None else []

    ctx.store_message = collect
    ctx.get_messages = get_messages
    return flush


def execute(
    spec: RunSpec,
    *,
    emit: Callable[[str, dict[str, Any]], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    job_id: str | None = None,
) -> tuple[list[RunResult], RunResult | None]:
    """Run every input of ``spec``; returns the results and the first failed one (or None)."""
    results: list[RunResult] = []
    for input_value, input_type, components, session in spec.inputs:
        ctx = make_context(
            user_id=spec.user_id,
            flow=spec.flow,
            session_id=session or spec.session_id,
            emit=emit,
            cancelled=cancelled,
            request_vars=spec.request_vars,
            job_id=job_id,
        )
        flush = _batch_messages(ctx, spec.user_id)
        try:
            result = run_graph(
                spec.graph, ctx, input_value=input_value, input_type=input_type, input_components=components or None
            )
        finally:
            flush()
        results.append(result)
        if not result.ok:
            return results, result
    return results, None


def run_now(spec: RunSpec) -> dict[str, Any]:
    """Run in the request; 500 naming the failing component when a vertex fails."""
    results, failed = execute(spec)
    if failed is not None:
        raise ApiError(500, failure_text(failed))
    return spec.respond(results)


def frame(event: str, data: Any) -> bytes:
    """One event of the v1 run stream: a bare JSON object and a blank line (no ``data:`` prefix)."""
    return (json.dumps({"event": event, "data": data}) + "\n\n").encode()


def stream(spec: RunSpec) -> Iterator[bytes]:
    """Run in a worker thread (a greenlet under gevent) and yield its events as they come.

    ``add_message``/``token`` are forwarded; the stream ends with ``end`` ``{result}`` or
    ``error`` ``{error}``. A client that goes away cancels the run at the next vertex.
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]
    events: queue.SimpleQueue[tuple[str, Any] | None] = queue.SimpleQueue()
    stop = threading.Event()

    def emit(event: str, data: dict[str, Any]) -> None:
        if event in STREAMED_EVENTS:
            events.put((event, data))

    def work() -> None:
        try:
            with app.app_context():
                results, failed = execute(spec, emit=emit, cancelled=stop.is_set)
                if failed is not None:
                    events.put(("error", {"error": failure_text(failed)}))
                else:
                    events.put(("end", {"result": spec.respond(results)}))
        except Exception:
            log.exception("streamed run of flow %s failed", spec.flow.get("id"))
            events.put(("error", {"error": "Internal Server Error"}))
        finally:
            events.put(None)

    worker = threading.Thread(target=work, name="run-stream", daemon=True)
    worker.start()

    def generate() -> Iterator[bytes]:
        try:
            while True:
                item = events.get()
                if item is None:
                    return
                yield frame(*item)
        finally:
            stop.set()

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

    return hashlib.sha256(b"service-run-session:" + secret_key(state().settings).encode()).digest()


def new_session_id(flow_id: str) -> str:
    """A session id this service issued for ``flow_id`` (verifiable by any process: HMAC, no storage)."""
    nonce = secrets.token_hex(8)
    sig = hmac.new(_session_key(), f"{flow_id}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]
    return f"{nonce}{sig}"


def session_known(user_id: str, flow: Mapping[str, Any], session_id: str) -> bool:
    """An advanced run may continue a session we issued, the flow's default session, or one with history."""
    flow_id = str(flow.get("id"))
    if session_id == flow_id:
        return True
    if len(session_id) == 32:
        nonce, sig = session_id[:16], session_id[16:]
        good = hmac.new(_session_key(), f"{flow_id}:{nonce}".encode(), hashlib.sha256).hexdigest()[:16]
        if hmac.compare_digest(sig, good):
            return True
    history = state().host.hook.message_history(user_id=user_id, flow_id=flow_id, session_id=session_id, limit=1)
    return bool(history)
