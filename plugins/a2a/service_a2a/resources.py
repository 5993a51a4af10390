"""A2A routes: the caller's agents, agent cards, JSON-RPC. All 404 before auth while the surface is off."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from flask import Response, abort, request
from flask_smorest import Blueprint
from marshmallow import Schema, fields

import core
from core.auth import authenticated, can, current_actor, resolve_actor
from core.contracts import FlowRecord, ResourceRef
from core.engine.lazy import lazy_import
from core.errors import ApiError, ValidationFailed, validation_error
from core.openapi import json_response
from core.requests import body_limit
from core.runs import admission, sse
from service_a2a import cards, services
from service_a2a import openapi_docs as docs
from service_a2a.config import settings as a2a_settings

if TYPE_CHECKING:
    from service_a2a import rpc
else:  # the SDK's protobuf and pydantic models (about 0.2 s) on the first JSON-RPC call, not at start-up
    rpc = lazy_import("service_a2a.rpc")

blp = Blueprint("a2a", __name__, url_prefix="/api/v1/a2a", description="Agent-to-agent (A2A) protocol")

API_KEY_REQUIRED = "API key required"
INVALID_API_KEY = "Invalid API key"


@blp.before_request
def _gate() -> None:
    """``SERVICE_A2A_ENABLED`` off: every route is 404, before any credential is looked at."""
    if not a2a_settings().a2a_enabled:
        abort(404)


def _base() -> str:
    return request.url_root.rstrip("/")


def _card_url(flow_id: str) -> str:
    return f"{_base()}/api/v1/a2a/{flow_id}/.well-known/agent-card.json"


def _agent(flow_id: str) -> FlowRecord:
    flow = services.find_agent(flow_id)  # None for an id that is no UUID too
    if flow is None:
        abort(404)
    return flow


@blp.route("/agents", methods=["GET"])
@blp.doc(responses={"200": json_response("the caller's published agents", docs.AGENTS)})
@authenticated("user")
def list_agents() -> Any:
    """The caller's published agents (``flow_type=agent`` and ``a2a_enabled``), each with its card URL."""
    return [
        {
            "id": flow.id,
            "name": flow.name,
            "description": flow.description,
            "cardUrl": _card_url(flow.id),
        }
        for flow in services.agents_of(current_actor().owner_id)
    ]


@blp.route("/<flow_id>/.well-known/agent-card.json", methods=["GET"])
@blp.doc(responses={"200": json_response("the agent card", docs.CARD)})
def agent_card(flow_id: str) -> Any:
    """The agent card (public by direct link; it names the key scheme when the project requires one)."""
    flow = _agent(flow_id)
    return cards.build_card(
        flow,
        rpc_url=f"{_base()}/api/v1/a2a/{flow_id}/jsonrpc",
        auth_type=services.auth_type(flow),
        server_version=core.__version__,
    )


class CardPreviewSchema(Schema):
    a2a_card_overrides = fields.Raw(allow_none=True, load_default=None)


@blp.route("/<flow_id>/card-preview", methods=["POST"])
@blp.arguments(CardPreviewSchema)
@blp.doc(responses={"200": json_response("the card the overrides would give, and its URL", docs.CARD_PREVIEW)})
@authenticated("user")
def card_preview(body: dict[str, Any], flow_id: str) -> Any:
    """The caller's flow's agent card with unsaved overrides, built exactly as the card endpoint builds it.

    For the editor's live preview: the flow need not be published yet; invalid overrides are a
    422 ``{detail: [{loc, msg, type}]}`` naming each wrong member.
    """
    flow = services.own_flow(current_actor().owner_id, flow_id)
    if flow is None:
        abort(404)
    raw = body.get("a2a_card_overrides")
    errors = cards.override_errors(raw)
    if errors:
        raise ValidationFailed(errors)
    try:
        card = cards.build_card(
            flow.replace(a2a_card_overrides=raw),
            rpc_url=f"{_base()}/api/v1/a2a/{flow_id}/jsonrpc",
            auth_type=services.auth_type(flow),
            server_version=core.__version__,
        )
    except ValidationFailed:
        raise
    except ApiError as exc:  # the a2a-sdk model refused the card
        raise validation_error(["a2a_card_overrides"], str(exc.detail)) from None
    return {"card": card, "cardUrl": _card_url(flow_id), "published": services.is_agent(flow)}


def _access(flow: FlowRecord) -> services.Access:
    """Who runs the agent: the run service's admission rule (:mod:`core.runs.admission`) over the
    ``x-api-key`` sent, its refusals in A2A's shape (an invalid key and another user's get one answer)."""
    auth_type = services.auth_type(flow)
    key = request.headers.get("x-api-key") or request.args.get("x-api-key")
    actor = None
    if key:
        try:
            actor = resolve_actor("api_key")
        except ApiError:
            actor = None
    member = False
    if actor is not None and actor.owner_id != str(flow.user_id):
        ref = ResourceRef("flow", str(flow.id), str(flow.user_id), str(flow.folder_id) if flow.folder_id else None)
        member = can(actor, "execute", ref)  # a team member the roles let run it (teams plugin)
    try:
        admitted = admission.admit(
            {"auth_type": auth_type}, str(flow.user_id), actor, presented=bool(key), member=member
        )
    except admission.Refused as refused:
        if refused.reason == admission.UNSUPPORTED:
            raise ApiError(403, f"Unsupported project auth type {auth_type!r} for A2A") from None
        if refused.reason == admission.CREDENTIALS_REQUIRED:
            raise ApiError(401, API_KEY_REQUIRED) from None
        raise ApiError(401, INVALID_API_KEY) from None
    return services.Access(flow.id, admitted.owner_id, public=admitted.anonymous)


@blp.route("/<flow_id>/jsonrpc", methods=["POST"])
@blp.doc(requestBody=docs.RPC_REQUEST, responses={"200": json_response("a JSON-RPC response", docs.RPC_RESPONSE)})
@body_limit("raw")  # a malformed body is a JSON-RPC parse error (HTTP 200), not the core's 422
def jsonrpc(flow_id: str) -> Any:
    """A2A JSON-RPC (v0.3 and 1.0 method names); JSON-RPC errors are HTTP 200."""
    flow = _agent(flow_id)
    access = _access(flow)
    try:
        call = rpc.parse(request.get_data())
    except rpc.RpcError as exc:
        return rpc.error(exc.rid, exc.code, exc.message, exc.data)
    try:
        if call.streaming:
            row = rpc.open_stream(call, access)
            return sse.response(rpc.stream(call, row), with_context=True)
        return _json(rpc.success(call.rid, rpc.handle(call, access, flow)))
    except rpc.RpcError as exc:
        return rpc.error(call.rid, exc.code, exc.message, exc.data)


#: the compact encoder, built once (``json.dumps`` with arguments builds one per call)
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def _json(payload: dict[str, Any]) -> Response:
    """A JSON-RPC answer, encoded once, compactly (Flask's provider sorts keys and indents in debug)."""
    return Response(_ENCODE(payload), mimetype="application/json")
