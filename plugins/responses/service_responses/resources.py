"""``POST /api/v1/responses`` (and ``GET /api/v1/responses/<id>`` for background runs)."""

from __future__ import annotations

from typing import Any

from flask import request
from flask_smorest import Blueprint

from core import appstate
from core.auth import SECURITY, resolve_actor
from core.errors import ApiError
from core.openapi import json_response
from core.runs import jobs, sse
from service_responses import openapi_docs as docs
from service_responses import services

blp = Blueprint("responses", __name__, url_prefix="/api/v1", description="OpenAI-style responses endpoint")


def _key_from_bearer() -> None:
    """Accept ``Authorization: Bearer <api key>`` (the openai SDK's header); ``x-api-key`` wins when both are sent."""
    if request.headers.get("x-api-key") or request.args.get("x-api-key"):
        return
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer " and auth[7:].strip():
        request.environ["HTTP_X_API_KEY"] = auth[7:].strip()


def _caller() -> Any:
    """The key's owner, or 401 before anything runs.

    The reference refuses a missing or wrong key before its handler (with 403); this endpoint answers
    401 with ``WWW-Authenticate: Bearer`` instead, the status OpenAI-protocol clients read as a bad key
    (the ``openai`` SDK raises ``AuthenticationError``). Every other error stays an HTTP 200 body.
    """
    _key_from_bearer()
    try:
        actor = resolve_actor("api_key")
    except ApiError as exc:
        if exc.status not in (401, 403):
            raise
        raise ApiError(401, str(exc.detail), {"WWW-Authenticate": "Bearer"}) from None
    if actor is None:
        raise ApiError(401, "An API key must be passed as query or header", {"WWW-Authenticate": "Bearer"})
    return actor


@blp.route("/responses", methods=["POST"])
@blp.doc(security=SECURITY["api_key"])
@blp.doc(requestBody=docs.REQUEST_BODY, responses={"200": json_response("a response or an error", docs.RESPONSE)})
@blp.response(200, description="a response object, an SSE stream (`stream: true`), or `{error: {message, type, code}}`")
def create_response():
    """Run the flow named by ``model`` with ``input``; errors are HTTP 200 ``{error: {message, type, code}}``."""
    actor = _caller()
    body: Any = request.get_json(silent=True)
    try:
        req = services.request_for(body, str(actor.owner_id))
        if body.get("background"):
            services.admit(req)
            job_id = jobs.enqueue(req, meta={"responses": True, "model": body["model"]})
            shell = services.response_body(req, body, "", "queued")
            return {**shell, "id": job_id, "background": True}
        if body.get("stream"):
            frames = services.stream(req, body)
            first = next(frames)  # errors before the run starts are answered as JSON
            return sse.response(_chain(first, frames), with_context=True)
        return services.run(req, body)
    except services.ResponseError as exc:
        return exc.body


def _chain(first: str, rest: Any) -> Any:
    yield first
    yield from rest


@blp.route("/responses/<response_id>", methods=["GET"])
@blp.doc(security=SECURITY["api_key"])
@blp.doc(responses={"200": json_response("the background response or an error", docs.RESPONSE)})
@blp.response(200, description="the background response, or `{error: {message, type, code}}`")
def get_response(response_id: str):
    """A background response: ``queued``, ``in_progress``, ``completed`` (with the output) or ``failed``."""
    actor = _caller()
    info = appstate.jobs().info_for(response_id, str(actor.owner_id))
    if info is None:
        return {
            "error": {
                "message": f"Response {response_id} not found",
                "type": "invalid_request_error",
                "code": "not_found",
            }
        }
    status = {
        "queued": "queued",
        "running": "in_progress",
        "finished": "completed",
        "cancelled": "cancelled",
        "suspended": "incomplete",  # waiting for a human decision (see docs/models.md)
    }.get(info.state.value, "failed")
    text = ""
    if status == "completed" and isinstance(info.result, dict):
        try:
            text = info.result["outputs"][0]["outputs"][0]["results"]["message"]["text"]
        except (KeyError, IndexError, TypeError):
            text = ""
    body = {"model": (info.meta or {}).get("model") or ""}
    shell = services.response_body(_Req(response_id), body, text, status)
    if status == "incomplete":
        shell["incomplete_details"] = {"reason": "waiting_for_approval"}
    if status == "failed":
        shell["error"] = {"message": info.error or "The run failed", "type": "server_error", "code": "flow_failed"}
    return {**shell, "id": response_id, "background": True}


class _Req:
    def __init__(self, session_id: str):
        self.session_id = session_id
