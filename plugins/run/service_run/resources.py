"""HTTP endpoints of the run plugin (paths and codes as the reference serves them).

* ``POST /api/v1/run/{flow_id_or_name}`` (``?stream=true``), ``/run/advanced/...``, ``/run/session/...``
* ``POST /api/v1/webhook/{flow_id_or_name}``, ``GET /api/v1/webhook/jobs/{job_id}``
* ``GET /api/v1/all``, ``POST /api/v1/validate/code``, ``POST /api/v1/validate/prompt``,
  ``GET /api/v1/model_providers/models`` (the component catalog and the model picker's live lists)
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from flask import Blueprint as FlaskBlueprint
from flask import Response, request
from flask_smorest import Blueprint
from marshmallow import Schema, ValidationError

from core import jsoncodec, openapi, runs
from core.app import state
from core.auth import allowed, authenticated, current_actor, resolve_actor
from core.errors import ApiError, ValidationFailed, flatten_marshmallow
from core.runs import registry, request_variables
from service_run import catalog, hookspecs, schemas, services, validate
from service_run.config import settings as run_settings
from service_run.jobs import WEBHOOK_JOB

run_blp = Blueprint("run", __name__, url_prefix="/api/v1", description="Run flows")
webhook_blp = Blueprint("webhook", __name__, url_prefix="/api/v1", description="Webhook runs")
base_blp = Blueprint("components", __name__, url_prefix="/api/v1", description="Component catalog and validation")
#: routes the reference keeps out of its OpenAPI document
hidden_bp = FlaskBlueprint("run_hidden", __name__, url_prefix="/api/v1")

STREAM_MIMETYPE = "text/event-stream"
_SIMPLIFIED = schemas.SimplifiedRunSchema()
_ADVANCED = schemas.AdvancedRunSchema()
_STREAM_TRUE = {"true", "1", "yes", "on"}
_STREAM_FALSE = {"false", "0", "no", "off", ""}


# --- request helpers ---------------------------------------------------------------------------------
def json_body(schema: Schema) -> dict[str, Any]:
    """The JSON body (any content type; empty means ``{}``) loaded with ``schema``; 422 otherwise."""
    raw = request.get_data(cache=True)
    # any content type; parsed by core.requests.parse_json (through Flask's JSON provider), at most once
    body: Any = request.get_json(force=True) if raw.strip() else {}
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ValidationFailed([{"loc": ["body"], "msg": "Input should be an object", "type": "model_attributes_type"}])
    try:
        loaded: dict[str, Any] = schema.load(body)
    except ValidationError as exc:
        raise ValidationFailed(flatten_marshmallow(exc.messages, "body")) from None
    return loaded


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
    response = Response(services.stream(prepared, respond), mimetype=STREAM_MIMETYPE)
    response.headers["Content-Type"] = "text/event-stream; charset=utf-8"
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"
    return response


def json_response(payload: Any, status: int = 200) -> Response:
    return Response(jsoncodec.dumps(payload), status=status, mimetype="application/json")


# --- simplified run ---------------------------------------------------------------------------------
def simplified_run(flow_id_or_name: str) -> Response:
    """The simplified run for the authenticated caller (shared by the key and session variants)."""
    body = json_body(_SIMPLIFIED)
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
    body = json_body(_ADVANCED)
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
    flow_id = prepared.flow.id
    job_id = state().jobs.enqueue(
        WEBHOOK_JOB,
        owner=str(prepared.request.user_id),
        kwargs={"request": prepared.request.to_json(), "flow": prepared.flow.as_dict()},
        meta={"flow_id": flow_id},
    )
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
    info = state().jobs.info_for(job_id, current_actor().owner_id)
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


# --- component catalog --------------------------------------------------------------------------------
@base_blp.route("/all", methods=["GET"])
@base_blp.arguments(schemas.CatalogQuerySchema, location="query")
@base_blp.response(200, description="``{category: {key: node}, component_display_names: {...}}``, gzip-encoded")
@base_blp.doc(
    responses={
        "200": {
            "description": "``{category: {key: node}, component_display_names: {...}}``, gzip-encoded",
            "content": {"application/json": {"schema": {"type": "object", "additionalProperties": {"type": "object"}}}},
        }
    }
)
@authenticated("user")
def all_components(query: Mapping[str, Any]):
    """Every component type by category, display names in the ``Accept-Language`` locale."""
    if query["include_blocked"] and not allowed(current_actor(), "admin"):
        raise ApiError(403, "Only superusers can include blocked components")
    reg = registry()
    locale = request.accept_languages.best_match(catalog.locales(reg), default=catalog.DEFAULT_LOCALE)
    hidden: frozenset[str] = frozenset()
    if not query["include_blocked"]:
        hidden = state().host.hooks.blocked_components()
    raw, packed = catalog.encoded(reg, locale or catalog.DEFAULT_LOCALE, hidden)
    response = Response(raw, mimetype="application/json")
    response.vary.add("Accept-Encoding")
    response.vary.add("Accept-Language")
    response.headers["Content-Language"] = locale or catalog.DEFAULT_LOCALE
    if request.accept_encodings["gzip"] > 0:
        response.set_data(packed)
        response.headers["Content-Encoding"] = "gzip"
    return response


# --- validation ----------------------------------------------------------------------------------------
@base_blp.route("/validate/code", methods=["POST"])
@base_blp.arguments(schemas.CodeSchema)
@base_blp.response(200, schemas.CodeValidationSchema)
@authenticated("user")
def validate_code(body: Mapping[str, Any]):
    """Check Python code for syntax errors and unknown imports, with the AST only (nothing runs)."""
    return validate.validate_code(body["code"])


@base_blp.route("/custom_component/update", methods=["POST"])
@base_blp.arguments(schemas.CustomComponentUpdateSchema)
@base_blp.response(200, description="the component node with the field updated")
@base_blp.doc(
    responses={
        "200": {
            "description": "the component node with the field updated",
            "content": {"application/json": {"schema": {"type": "object", "description": "a frontend node"}}},
        }
    }
)
@authenticated("user")
def update_custom_component(body: Mapping[str, Any]):
    """Set one field of a custom component node (allowed by SERVICE_ALLOW_CUSTOM_COMPONENTS, else 403).

    With ``SERVICE_CUSTOM_COMPONENT_ADMIN_ONLY`` only superusers may. The code is
    checked for syntax with the AST only; it is never executed here.
    """
    from core.builtin.hardening import require_custom_code

    require_custom_code(state().settings, current_actor())
    return validate.update_custom_component(dict(body))


@base_blp.route("/validate/prompt", methods=["POST"])
@base_blp.arguments(schemas.PromptSchema)
@base_blp.response(200, schemas.PromptValidationSchema)
@authenticated("user")
def validate_prompt(body: Mapping[str, Any]):
    """The prompt's ``{variables}``, and the frontend node with one input field per variable."""
    return validate.validate_prompt(body)


# --- the model picker's live lists ---------------------------------------------------------------------
MODEL_LIST = {
    "type": "object",
    "properties": {"provider": {"type": "string"}, "models": {"type": "array", "items": {"type": "object"}}},
}


@base_blp.route("/model_providers/models", methods=["GET"])
@base_blp.doc(responses={"200": openapi.json_response("the provider's live model list", MODEL_LIST)})
@base_blp.response(200, description="`{provider, models}`: the provider's live model list")
@authenticated("user")
def model_provider_models():
    """The models a provider offers the caller (the editor's model picker): live from the provider's ``GET /models``.

    ``provider`` is a provider name of the model field (``OpenAI Compatible``, ``OpenAI``, ``Ollama``);
    ``refresh=true`` bypasses the short cache. 403 when the model-provider policy blocks it, 422 for an
    unknown or unconfigured provider (no endpoint, no key, an address the egress rules refuse), 502 when
    the provider fails or cannot be reached.
    """
    provider = (request.args.get("provider") or "OpenAI Compatible").strip()
    refresh = request.args.get("refresh", "").lower() in ("1", "true", "yes")
    ctx = runs.make_context(
        user_id=str(current_actor().owner_id),
        flow={"id": None, "name": "", "data": {}},
        store_messages=False,
        log_builds=False,
    )
    pid = provider.lower().replace(" ", "-")
    if ctx.provider_allowed is not None and not ctx.provider_allowed(pid):
        raise ApiError(403, f"Model provider '{pid}' is not allowed by the model-provider policy")
    try:
        models = state().host.hooks.first(hookspecs.list_models, context=ctx, provider=provider, refresh=refresh)
    except ValueError as exc:  # not usable as configured: no endpoint or key, a blocked address, a refused key
        raise ApiError(422, [{"loc": ["query", "provider"], "msg": str(exc), "type": "value_error"}]) from exc
    except Exception as exc:  # the provider failed or cannot be reached
        raise ApiError(502, f"{provider}: {exc}") from exc
    if models is None:
        msg = f"Unknown provider '{provider}'"
        raise ApiError(422, [{"loc": ["query", "provider"], "msg": msg, "type": "value_error"}])
    return {"provider": provider, "models": list(models)}
