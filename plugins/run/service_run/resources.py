"""HTTP endpoints of the run plugin (paths and codes as the reference serves them).

* ``POST /api/v1/run/{flow_id_or_name}`` (``?stream=true``), ``/run/advanced/...``, ``/run/session/...``
* ``POST /api/v1/webhook/{flow_id_or_name}``, ``GET /api/v1/webhook/jobs/{job_id}``

The component catalog and validation endpoints are the catalog plugin's (``plugins/catalog``).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from flask import Blueprint as FlaskBlueprint
from flask import Response, request
from flask_smorest import Blueprint

from core import appstate, jsoncodec, runs
from core.auth import authenticated, current_actor, resolve_actor
from core.errors import ApiError, ValidationFailed
from core.requests import load_body
from core.runs import request_variables, sse
from service_run import jobs as webhook_jobs
from service_run import schemas, services
from service_run.config import settings as run_settings
from service_run.jobs import WEBHOOK_JOB

run_blp = Blueprint("run", __name__, url_prefix="/api/v1", description="Run flows")
webhook_blp = Blueprint("webhook", __name__, url_prefix="/api/v1", description="Webhook runs")
#: routes the reference keeps out of its OpenAPI document
hidden_bp = FlaskBlueprint("run_hidden", __name__, url_prefix="/api/v1")

_SIMPLIFIED = schemas.SimplifiedRunSchema()
_ADVANCED = schemas.AdvancedRunSchema()
_STREAM_TRUE = {"true", "1", "yes", "on"}
_STREAM_FALSE = {"false", "0", "no", "off", ""}


# --- request helpers ---------------------------------------------------------------------------------
def stream_flag() -> bool:
    value = request.args.get("stream")
    if value is None:
        return False
    low = value.strip().lower()
    if low in _STREAM_TRUE:
        return True
    if low in _STREAM_FALSE:
        return False
    raise ValidationFailed([{"loc": ["query", "stream"], "msg": "Not a valid boolean.", "type": "bool_parsing"}])


def stream_response(prepared: runs.PreparedRun, respond: services.Respond) -> Response:
    return sse.response(services.stream(prepared, respond))


def json_response(payload: Any, status: int = 200) -> Response:
    return Response(jsoncodec.dumps(payload), status=status, mimetype="application/json")


# --- simplified run ---------------------------------------------------------------------------------
def simplified_run(flow_id_or_name: str) -> Response:
    """The simplified run for the authenticated caller (shared by the key and session variants)."""
    body = load_body(_SIMPLIFIED)
    streaming = stream_flag() or bool(body["stream"])
    actor = current_actor()
    input_type = body["input_type"] or "chat"
    prepared = runs.prepare(
        runs.RunRequest(
            flow=flow_id_or_name,
            user_id=actor.owner_id,
            surface="run",
            inputs=[runs.RunInput(body["input_value"], input_type)],
            tweaks=body["tweaks"] or None,
            session_id=body["session_id"] or None,
            request_vars=services.request_vars(request_variables(request.headers), body["context"]),
        )
    )
    respond = services.simplified_response(
        body["input_value"], body["output_type"] or "chat", body["output_component"] or ""
    )
    if streaming:
        return stream_response(prepared, respond)
    return json_response(services.run_now(prepared, respond))


_RUN_DOC = {
    "requestBody": {"content": {"application/json": {"schema": schemas.SimplifiedRunSchema}}, "required": False},
    "parameters": [
        {"in": "query", "name": "stream", "schema": {"type": "boolean", "default": False}, "required": False}
    ],
    "responses": {
        "200": {
            "description": "run response, or with ``stream=true`` a ``text/event-stream`` of bare JSON events",
            "content": {"application/json": {"schema": schemas.RunResponseSchema}},
        },
    },
}


@run_blp.route("/run/<flow_id_or_name>", methods=["POST"])
@run_blp.doc(**_RUN_DOC)
@authenticated("api_key")
def run_flow(flow_id_or_name: str):
    """Run a flow by id or endpoint name with the simplified request (API key only)."""
    return simplified_run(flow_id_or_name)


@hidden_bp.route("/run/session/<flow_id_or_name>", methods=["POST"])
@authenticated("user")
def run_flow_session(flow_id_or_name: str):
    """The simplified run with the editor's session (bearer token or cookie) instead of an API key."""
    return simplified_run(flow_id_or_name)


# --- advanced run -------------------------------------------------------------------------------------
@run_blp.route("/run/advanced/<flow_id_or_name>", methods=["POST"])
@run_blp.doc(
    requestBody={"content": {"application/json": {"schema": schemas.AdvancedRunSchema}}, "required": False},
    responses={
        "200": {"description": "run response", "content": {"application/json": {"schema": schemas.RunResponseSchema}}}
    },
)
@authenticated("api_key")
def run_flow_advanced(flow_id_or_name: str):
    """Run a flow with the complete request: several inputs, chosen outputs, tweaks, session (API key only)."""
    body = load_body(_ADVANCED)
    actor = current_actor()
    inputs = (
        body["inputs"]
        if body["inputs"] is not None
        else [{"components": [], "input_value": "", "session": None, "type": "chat"}]
    )
    req = runs.RunRequest(
        flow=flow_id_or_name,
        user_id=actor.owner_id,
        surface="run_advanced",
        inputs=[
            runs.RunInput(
                item.get("input_value"), item.get("type") or "chat", item.get("components") or None, item.get("session")
            )
            for item in inputs
        ],
        tweaks=body["tweaks"] or None,
        request_vars=services.request_vars(request_variables(request.headers), None),
    )
    prepared = runs.resolve(req)
    session_id = body["session_id"]
    if session_id and not services.session_known(actor.owner_id, prepared.flow, session_id):
        raise ApiError(404, f"Session {session_id} not found")
    req.session_id = session_id or services.new_session_id(prepared.flow.id)
    runs.build(prepared)
    respond = services.advanced_response(body["outputs"], req.session_id, [item.value for item in req.inputs])
    if body["stream"]:
        return stream_response(prepared, respond)
    return json_response(services.run_now(prepared, respond))


# --- webhook -------------------------------------------------------------------------------------------
WEBHOOK_STARTED = "Task started in the background"


def _webhook_run(flow_id_or_name: str, payload: str) -> runs.PreparedRun:
    """The webhook's run, resolved as the user it runs as (per ``SERVICE_WEBHOOK_AUTH_ENABLE``)."""
    user_id: str | None = None
    if run_settings().webhook_auth_enable:
        if not (request.args.get("x-api-key") or request.headers.get("x-api-key")):
            raise ApiError(403, "API key required when webhook authentication is enabled")
        try:
            actor = resolve_actor("api_key")
        except ApiError as exc:
            raise ApiError(403, "Invalid API key") from exc
        if actor is None:
            raise ApiError(403, "Invalid API key")
        user_id = actor.owner_id
    req = runs.RunRequest(
        flow=flow_id_or_name, user_id=user_id, surface="webhook", inputs=[runs.RunInput("")], webhook_payload=payload
    )
    prepared = runs.resolve(req)  # without a key: any owner's flow (the flows plugin looks across owners)
    if req.user_id is None:
        owner = prepared.flow.user_id
        if not owner:
            raise ApiError(404, f"Flow identifier {flow_id_or_name} not found")
        req.user_id = str(owner)
    return prepared


@webhook_blp.route("/webhook/<flow_id_or_name>", methods=["POST"])
@webhook_blp.doc(
    requestBody={"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}, "required": True},
    responses={
        "202": {"description": "started", "content": {"application/json": {"schema": schemas.WebhookStartSchema}}}
    },
    security=[{"API key query": []}, {"API key header": []}, {}],
)
def webhook_run(flow_id_or_name: str):
    """Start a flow in the background with the raw request body as the Webhook component's payload."""
    raw = request.get_data(cache=False)
    body = raw.decode("utf-8", errors="replace")
    prepared = _webhook_run(flow_id_or_name, body)
    if not raw or not raw.strip():
        raise ApiError(400, "Request body is empty. You should provide a JSON payload containing the flow ID.")
    job_id = webhook_jobs.enqueue(prepared)
    return json_response(
        {
            "message": WEBHOOK_STARTED,
            "status": "in progress",
            "job_id": job_id,
            "status_url": f"/api/v1/webhook/jobs/{job_id}",
        },
        202,
    )


def _iso(epoch: float | None) -> str | None:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat() if epoch else None


@webhook_blp.route("/webhook/jobs/<job_id>", methods=["GET"])
@webhook_blp.response(200, schemas.WebhookJobSchema)
@authenticated("user")
def webhook_job(job_id: str):
    """State of a webhook run started by (or as) the caller; once finished, its run response."""
    info = appstate.jobs().info_for(job_id, current_actor().owner_id)
    if info is None or info.name != WEBHOOK_JOB:
        raise ApiError(404, f"Job not found: {job_id}")
    status = str(info.state.value if hasattr(info.state, "value") else info.state)
    return {
        "job_id": info.id,
        "flow_id": (info.meta or {}).get("flow_id"),
        "status": status,
        "created_at": _iso(info.created_at),
        "started_at": _iso(info.started_at),
        "ended_at": _iso(info.ended_at),
        "result": info.result if status == "finished" else None,
        "error": info.error,
    }
