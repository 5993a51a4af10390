"""HTTP endpoints of the triggers plugin.

* ``/api/v1/executions``: list (filters), read one, ``POST /{id}/retry``; ``/api/v1/executions/policies/{flow_id}``;
* ``/api/v1/schedules``: CRUD of cron and interval schedules;
* ``/api/v1/triggers``: signed webhook triggers (CRUD, ``POST /{id}/signing-secret`` rotates);
* ``POST /api/v1/triggers/ingress/webhook/{public_id}``: the signed, unauthenticated ingress.

Everything but the ingress is owner-scoped: another user's execution, schedule or trigger is 404, unless its
flow is shared with the caller (``core.auth.flow_access``, the teams plugin's roles): listing its executions and
schedules (``flow_id``) and reading one by id needs ``read`` and shows every user's rows of that flow;
automating it (a schedule, a trigger, a retry policy; changing one, rotating a secret) needs ``write``,
deleting one ``delete``, retrying an execution ``execute`` (it runs as the caller). A flow the caller may not
see is 404, one they may only read 403.
"""

from __future__ import annotations

import logging
from typing import Any

from flask import current_app, jsonify, request
from flask_smorest import Blueprint

from core import appstate, limits
from core.auth import authenticated, current_actor, flow_access
from core.errors import ApiError
from core.limits import TOO_MANY
from core.openapi import no_body
from service_triggers import executions, schedules, webhooks
from service_triggers import schemas as sc
from service_triggers.config import settings
from service_triggers.ticker import TICKER

log = logging.getLogger(__name__)
#: the rate limiter's namespace of the signed ingress's per-address counts
ADDRESS_SCOPE = "triggers-ingress-address"

triggers_blp = Blueprint("triggers", __name__, url_prefix="/api/v1", description="Executions, schedules, triggers")


def _app() -> Any:
    return current_app._get_current_object()  # type: ignore[attr-defined]


def _uid() -> str:
    return str(current_actor().id)


def _lister(flow_id: str | None) -> str | None:
    """Whose rows a list shows: every user's of a flow the caller may read (404/403), else the caller's."""
    if flow_id is None:
        return _uid()
    flow_access(current_actor(), flow_id, "read")
    return None


def _automate(flow_id: Any) -> None:
    """Schedules, triggers and retry policies change how a flow runs: its owner's or a writer's (404/403)."""
    flow_access(current_actor(), flow_id, "write", draft=False)


def _reach(row: Any, verb: str, what: str) -> Any:
    """A schedule, trigger or execution row: the caller's, or another user's of a flow the caller may ``verb``
    (a team's shared flow: ``core.auth.flow_access``; 404 naming the row when they may not read the flow, 403
    when they may read but not ``verb`` it). Changes keep the row its creator's."""
    if str(row.user_id) != _uid():
        flow_access(current_actor(), row.flow_id, verb, not_found=f"{what} not found")
    return row


def _schedule(schedule_id: str, verb: str) -> Any:
    return _reach(schedules.read(_app(), None, schedule_id), verb, "Schedule")


def _trigger(trigger_id: str, verb: str) -> Any:
    return _reach(webhooks.read(_app(), None, trigger_id), verb, "Trigger")


def _execution(execution_id: str, verb: str) -> Any:
    return _reach(executions.read(_app(), None, execution_id), verb, "Execution")


def _s(value: Any) -> str | None:
    return None if value is None else str(value)


@triggers_blp.before_app_request
def _start_ticker() -> None:
    TICKER.ensure(_app())


# --- executions -------------------------------------------------------------------------------------
@triggers_blp.route("/executions", methods=["GET"])
@triggers_blp.arguments(sc.ExecutionQuerySchema, location="query")
@triggers_blp.response(200, sc.ExecutionSchema(many=True))
@authenticated("user")
def list_executions(query):
    """The caller's executions, newest first; filter by flow, status, trigger and start time."""
    query["flow_id"] = _s(query["flow_id"])
    return executions.list_executions(_app(), _lister(query["flow_id"]), **query)


@triggers_blp.route("/executions/<execution_id>", methods=["GET"])
@triggers_blp.response(200, sc.ExecutionSchema)
@authenticated("user")
def read_execution(execution_id: str):
    """An execution: the caller's, or another user's of a flow the caller may read (its run id is its id;
    ``trace_url`` links its trace)."""
    return executions.out(_execution(execution_id, "read"))


@triggers_blp.route("/executions/<execution_id>/retry", methods=["POST"])
@triggers_blp.doc(requestBody=no_body("the execution is named by the path"))
@triggers_blp.response(202, sc.ExecutionSchema)
@authenticated("user")
def retry_execution(execution_id: str):
    """Run an ended execution again with the same inputs: a new execution with ``retry_of`` set. Another
    user's execution of a flow the caller may run (``execute``) is retried as the caller."""
    row = _execution(execution_id, "execute")
    return executions.retry(_app(), str(row.user_id), execution_id, as_user=_uid())


@triggers_blp.route("/executions/policies/<flow_id>", methods=["GET"])
@triggers_blp.response(200, sc.PolicyOutSchema)
@authenticated("user")
def read_policy(flow_id: str):
    """A flow's retry policy and error flow (defaults when none was set)."""
    flow_access(current_actor(), flow_id, "read")
    flow = _own_flow(flow_id)
    found = executions.policy(_app(), flow.id)
    if found is None or found["user_id"] != _uid():
        return {"flow_id": flow.id, "attempts": 1, "backoff_s": 10.0, "error_flow_id": None}
    found.pop("user_id", None)
    return found


@triggers_blp.route("/executions/policies/<flow_id>", methods=["PUT"])
@triggers_blp.arguments(sc.PolicySchema)
@triggers_blp.response(200, sc.PolicyOutSchema)
@authenticated("user")
def put_policy(body, flow_id: str):
    """Set a flow's retry policy (``attempts`` in all, ``backoff_s`` doubling) and error flow."""
    _automate(flow_id)
    flow = _own_flow(flow_id)
    if body.get("error_flow_id") is not None:
        body["error_flow_id"] = _own_flow(str(body["error_flow_id"])).id
    saved = executions.put_policy(_app(), _uid(), flow.id, body)
    saved.pop("user_id", None)
    return saved


def _own_flow(flow_id: str) -> Any:
    found = appstate.hooks().find_flow(user_id=_uid(), flow_id_or_name=flow_id, public=False)
    if found is None:
        raise ApiError(404, f"Flow identifier {flow_id} not found")
    return found


# --- schedules --------------------------------------------------------------------------------------
@triggers_blp.route("/schedules", methods=["GET"])
@triggers_blp.arguments(sc.FlowQuerySchema, location="query")
@triggers_blp.response(200, sc.ScheduleSchema(many=True))
@authenticated("user")
def list_schedules(query):
    """The caller's schedules (of one flow with ``flow_id``), each with its next five fire times."""
    flow_id = _s(query["flow_id"])
    return schedules.list_for(_app(), _lister(flow_id), flow_id)


@triggers_blp.route("/schedules", methods=["POST"])
@triggers_blp.arguments(sc.ScheduleCreateSchema)
@triggers_blp.response(201, sc.ScheduleSchema)
@authenticated("user")
def create_schedule(body):
    """Schedule one of the caller's flows: ``cron`` (in ``timezone``) or ``interval_s``."""
    body["flow_id"] = str(body["flow_id"])
    _automate(body["flow_id"])
    return schedules.create(_app(), _uid(), body)


@triggers_blp.route("/schedules/<schedule_id>", methods=["GET"])
@triggers_blp.response(200, sc.ScheduleSchema)
@authenticated("user")
def read_schedule(schedule_id: str):
    """A schedule: the caller's, or another user's of a flow the caller may read."""
    return schedules.out(_schedule(schedule_id, "read"))


@triggers_blp.route("/schedules/<schedule_id>", methods=["PATCH"])
@triggers_blp.arguments(sc.ScheduleUpdateSchema)
@triggers_blp.response(200, sc.ScheduleSchema)
@authenticated("user")
def update_schedule(body, schedule_id: str):
    """Change a schedule; ``enabled: false`` pauses it (the next fire time is computed anew on resume). Another
    user's schedule of a flow the caller may write stays theirs (it runs as them)."""
    row = _schedule(schedule_id, "write")
    return schedules.update(_app(), str(row.user_id), schedule_id, body)


@triggers_blp.route("/schedules/<schedule_id>", methods=["DELETE"])
@triggers_blp.response(204)
@authenticated("user")
def delete_schedule(schedule_id: str):
    """Delete a schedule: the caller's, or another user's of a flow the caller may delete."""
    row = _schedule(schedule_id, "delete")
    schedules.delete(_app(), str(row.user_id), schedule_id)
    return None


# --- signed webhook triggers ------------------------------------------------------------------------
@triggers_blp.route("/triggers", methods=["GET"])
@triggers_blp.arguments(sc.FlowQuerySchema, location="query")
@triggers_blp.response(200, sc.TriggerSchema(many=True))
@authenticated("user")
def list_triggers(query):
    flow_id = _s(query["flow_id"])
    return webhooks.list_for(_app(), _lister(flow_id), flow_id)


@triggers_blp.route("/triggers", methods=["POST"])
@triggers_blp.arguments(sc.WebhookCreateSchema)
@triggers_blp.response(201, sc.TriggerSchema)
@authenticated("user")
def create_trigger(body):
    """A signed webhook trigger of one of the caller's flows; the answer shows its signing secret once."""
    body["flow_id"] = str(body["flow_id"])
    _automate(body["flow_id"])
    return webhooks.create(_app(), _uid(), body)


@triggers_blp.route("/triggers/<trigger_id>", methods=["GET"])
@triggers_blp.response(200, sc.TriggerSchema)
@authenticated("user")
def read_trigger(trigger_id: str):
    """A signed trigger (never its secret): the caller's, or another user's of a flow the caller may read."""
    return webhooks.out(_trigger(trigger_id, "read"))


@triggers_blp.route("/triggers/<trigger_id>", methods=["PATCH"])
@triggers_blp.arguments(sc.WebhookUpdateSchema)
@triggers_blp.response(200, sc.TriggerSchema)
@authenticated("user")
def update_trigger(body, trigger_id: str):
    """Change a trigger: the caller's, or another user's of a flow the caller may write."""
    row = _trigger(trigger_id, "write")
    return webhooks.update(_app(), str(row.user_id), trigger_id, body)


@triggers_blp.route("/triggers/<trigger_id>", methods=["DELETE"])
@triggers_blp.response(204)
@authenticated("user")
def delete_trigger(trigger_id: str):
    """Delete a trigger: the caller's, or another user's of a flow the caller may delete."""
    row = _trigger(trigger_id, "delete")
    webhooks.delete(_app(), str(row.user_id), trigger_id)
    return None


@triggers_blp.route("/triggers/<trigger_id>/signing-secret", methods=["POST"])
@triggers_blp.doc(requestBody=no_body("the trigger is named by the path"))
@triggers_blp.response(200, sc.TriggerSchema)
@authenticated("user")
def rotate_secret(trigger_id: str):
    """A new signing secret (shown once); deliveries signed with the old one are refused from now on. Another
    user's trigger of a flow the caller may write (the secret starts runs of it)."""
    row = _trigger(trigger_id, "write")
    return webhooks.rotate(_app(), str(row.user_id), trigger_id)


@triggers_blp.route("/triggers/ingress/webhook/<public_id>", methods=["POST"])
@triggers_blp.doc(
    requestBody={"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}, "required": True},
    security=[{}],
)
@triggers_blp.response(202, sc.IngressAnswerSchema)
@triggers_blp.alt_response(404, description="every refusal (unknown id, bad or stale signature...)")
@triggers_blp.alt_response(
    429, description="the trigger's deliveries, or the client address's requests, per minute are spent (Retry-After)"
)
def ingress(public_id: str):
    """A signed delivery (no credential: the signature is the proof). 202 once recorded; any refusal 404."""
    configured = settings(_app())
    if configured.ingress_per_address_per_minute > 0:  # every request of the address, before any lookup
        limits.hit(configured.ingress_per_address_per_minute, ADDRESS_SCOPE)
    limit = configured.max_body_bytes
    declared = request.content_length
    body = None if declared is not None and declared > limit else request.get_data(cache=False)
    if body is not None and len(body) > limit:
        body = None
    try:
        return webhooks.receive(_app(), public_id, request.headers, body)
    except webhooks.Limited as limited:
        log.info("trigger ingress limited a delivery for %s", public_id[:64])
        response = jsonify({"detail": TOO_MANY, "retry_after": str(limited.retry_after)})
        response.status_code = 429
        response.headers["Retry-After"] = str(limited.retry_after)
        return response
    except webhooks.Refused as refused:
        log.info("trigger ingress refused a delivery for %s: %s", public_id[:64], refused.reason)
        refusal = jsonify(webhooks.NOT_FOUND)
        refusal.status_code = 404
        return refusal
