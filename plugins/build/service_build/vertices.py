"""The deprecated vertex operations, at the reference's paths (hidden from the OpenAPI document, as there).

* ``POST /api/v1/build/{flow_id}/vertices`` (query ``start_component_id``,
  ``stop_component_id``; body ``{data}`` optional) -> ``{ids, run_id,
  vertices_to_run}``; an unsaved graph sent here is kept (cache TTL) for the
  vertex builds that follow.
* ``POST /api/v1/build/{flow_id}/vertices/{vertex_id}`` (body ``{inputs, files}``)
  -> the vertex build response; builds the vertex synchronously, reusing the
  cached results of its ancestors that are still valid and building the others.
* ``GET /api/v1/build/{flow_id}/{vertex_id}/stream`` -> ``text/event-stream``:
  ``message`` ``{"message": "Streaming vertex <id>"}``, ``message``
  ``{"chunk": <text of its result>}``, ``close`` ``{"message": "Stream closed"}``
  (or ``error`` ``{"error": ...}``), from the cached result or a fresh build.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, current_app, request

from core import runs
from core.auth import authenticated, current_actor
from core.engine import Graph, GraphValidationError, RunEvent, VertexFinished
from core.engine.types import to_text
from core.errors import ApiError, ValidationFailed
from core.requests import body_limit, load
from core.runs import registry, sse
from service_build import schemas
from service_build.config import runtime
from service_build.services import BuildRequest, prepare, run_build

legacy_bp = Blueprint("build_vertices", __name__, url_prefix="/api/v1/build")


def _flow(flow_id: str) -> dict[str, Any]:
    """The caller's flow, allowed by ``check_run`` (404 / 403): looked up once per request."""
    try:
        prepared = runs.resolve(runs.RunRequest(flow=flow_id, user_id=current_actor().owner_id, surface="build"))
    except runs.FlowNotFound:
        raise ApiError(404, f"Flow with id {flow_id} not found") from None
    return prepared.flow.as_dict()


def _saved_key(owner: str, flow_id: str) -> str:
    return f"vertices:{owner}:{flow_id}"


def _graph(data: dict[str, Any]) -> Graph:
    try:
        return Graph.build(data, registry())
    except GraphValidationError as exc:
        raise ValidationFailed(exc.errors) from None


def _request(flow: dict[str, Any], vertex_id: str, body: dict[str, Any]) -> BuildRequest:
    owner = current_actor().owner_id
    saved = runtime().store.cache_get(_saved_key(owner, str(flow["id"]))) or {}
    inputs = body.get("inputs") or {}
    return BuildRequest(
        owner=owner,
        run_user_id=owner,
        flow_id=str(flow["id"]),
        run_flow_id=str(flow["id"]),
        flow_name=flow.get("name"),
        flow={**flow, "data": saved.get("data") or flow.get("data") or {}},
        session=inputs.get("session") or None,
        input_value=inputs.get("input_value"),
        input_type=inputs.get("type") or "chat",
        input_components=inputs.get("components") or None,
        files=body.get("files") or None,
        start_component_id=vertex_id,
        stop_component_id=vertex_id,
    )


@legacy_bp.route("/<flow_id>/vertices", methods=["POST"])
@body_limit("flow")
@authenticated("user")
def vertices_order(flow_id: str):
    query = load(schemas.PartialQuerySchema(), request.args.to_dict(), "query", lenient=True)
    body = load(schemas.VerticesBodySchema(), request.get_json(silent=True), "body", lenient=True)
    flow = _flow(flow_id)
    data = body.get("data") or flow.get("data") or {}
    graph = _graph(data)
    to_run, _ = graph.plan(query.get("start_component_id"), query.get("stop_component_id"))
    layers = graph.layers(to_run)
    ordered: list[str] = []
    for layer in layers:
        for vid in layer:
            ordered.append(vid)
            ordered.extend(b for b in graph.loop_bodies.get(vid, []) if b in to_run)
    run_id = str(uuid.uuid4())
    rt = runtime()
    rt.store.cache_put(
        _saved_key(current_actor().owner_id, str(flow["id"])),
        {"run_id": run_id, "data": body.get("data")},
        rt.config.cache_ttl_seconds,
        rt.config.cache_max_bytes * 5,
    )
    return {"ids": list(layers[0]) if layers else [], "run_id": run_id, "vertices_to_run": ordered}


def _build_one(flow_id: str, vertex_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """Build one vertex (and its ancestors that have no valid cached result); its vertex build response."""
    flow = _flow(flow_id)
    req = _request(flow, vertex_id, body)
    graph = _graph((req.flow or {}).get("data") or {})
    vertex = graph.find(vertex_id)
    if vertex is None:
        raise ApiError(404, f"Vertex {vertex_id} not found")
    req.start_component_id = req.stop_component_id = vertex.id
    events: list[RunEvent] = []
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    outcome = run_build(app, req, emit=events.append)
    for event in events:
        if isinstance(event, VertexFinished) and event.vertex_id == vertex.id:
            return dict(event.payload()["build_data"])
    result = outcome.results[-1] if outcome is not None else None
    message = (result.error or {}).get("message") if result is not None else None
    return {
        "id": vertex.id,
        "inactivated_vertices": [],
        "next_vertices_ids": [],
        "top_level_vertices": [],
        "valid": False,
        "params": message or "Vertex was not built",
        "data": {},
        "timestamp": datetime.now(UTC).isoformat(),
    }


@legacy_bp.route("/<flow_id>/vertices/<vertex_id>", methods=["POST"])
@authenticated("user")
def build_vertex(flow_id: str, vertex_id: str):
    body = load(schemas.VertexBuildBodySchema(), request.get_json(silent=True), "body", lenient=True)
    return _build_one(flow_id, vertex_id, body)


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


@legacy_bp.route("/<flow_id>/<vertex_id>/stream", methods=["GET"])
@authenticated("user")
def build_vertex_stream(flow_id: str, vertex_id: str):
    flow = _flow(flow_id)
    frames: list[str] = []
    try:
        req = _request(flow, vertex_id, {})
        app = current_app._get_current_object()  # type: ignore[attr-defined]
        prep = prepare(app, req, lambda *_: None)
        if prep is None:
            raise ValueError("The flow is not valid")
        vertex = prep.graph.find(vertex_id)
        if vertex is None:
            raise ValueError(f"Vertex {vertex_id} not found")
        _, valid = prep.cached(app, any_inputs=True)
        built = valid.get(vertex.id)
        if built is None:
            req.start_component_id = req.stop_component_id = vertex.id
            outcome = run_build(app, req, emit=lambda *_: None, prepared=prep)
            result = outcome.results[-1] if outcome is not None else None
            built = result.results.get(vertex.id) if result is not None else None
            if result is None or built is None or not built.valid:
                raise ValueError(
                    (result.error or {}).get("message")
                    if result and result.error
                    else f"Vertex {vertex_id} could not be built"
                )
        frames.append(_sse("message", {"message": f"Streaming vertex {vertex.id}"}))
        text = to_text(built.primary()[1])
        if text:
            frames.append(_sse("message", {"chunk": text}))
        frames.append(_sse("close", {"message": "Stream closed"}))
    except ValueError as exc:
        frames.append(_sse("error", {"error": str(exc)}))
    return sse.response("".join(frames))
