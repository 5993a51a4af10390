"""HTTP endpoints of the v2 workflows API (paths, codes and bodies as the reference serves them).

* ``POST /api/v2/workflows``: ``mode`` sync | stream (``stream_protocol`` service | agui) | background
* ``GET /api/v2/workflows?job_id=``, ``GET /api/v2/workflows/{job_id}/events`` (``Last-Event-ID``),
  ``POST /api/v2/workflows/stop``
* ``GET /api/v2/workflows/pending?flow_id=``, ``POST /api/v2/workflows/{job_id}/resume``
* ``POST /api/v2/workflows/public``: anonymous, stream only, ``client_id`` cookie, rate limited
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from flask import request
from flask_smorest import Blueprint

from core import appstate, openapi, runs
from core.auth import authenticated, current_actor
from core.errors import ApiError, ValidationFailed
from core.requests import load, request_json
from core.runs import checkpoints, public, request_variables, resumes, sse
from core.runs import jobs as run_jobs
from service_workflows import schemas, services, streams
from service_workflows.jobs import RESUME_JOB, RUN_JOB, SHAPER

blp = Blueprint("workflows", __name__, url_prefix="/api/v2/workflows", description="Workflows (v2, Beta)")

_RUN = schemas.WorkflowRunSchema()
_LEGACY = schemas.LegacyWorkflowRunSchema()
_JOBS = (RUN_JOB, RESUME_JOB)
#: members an anonymous caller may not send (the stored flow runs as it is)
PUBLIC_FORBIDDEN = ("tweaks", "data", "files", "globals", "start_component_id", "stop_component_id", "idempotency_key")


_RESPONSE_OR_JOB = {"anyOf": [schemas.WorkflowResponseSchema, schemas.WorkflowJobSchema]}
_SSE = {"text/event-stream": {"schema": {"type": "string"}}}


#: 422 is the usual validation list, or the reference's object for an unknown ``stream_protocol``
_UNPROCESSABLE = {
    "description": "Invalid body, or an unknown stream_protocol",
    "content": {
        "application/json": {
            "schema": {
                "type": "object",
                "required": ["detail"],
                "properties": {
                    "detail": {
                        "anyOf": [
                            {"type": "array", "items": openapi.ValidationItemSchema},
                            {
                                "type": "object",
                                "required": ["code", "available"],
                                "properties": {
                                    "error": {"type": "string"},
                                    "code": {"type": "string", "enum": ["UNKNOWN_STREAM_PROTOCOL"]},
                                    "message": {"type": "string"},
                                    "available": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                        ]
                    }
                },
            }
        }
    },
}


def _ok(description: str, *, json_body: Any = None, stream: bool = False, protocol: bool = False) -> dict[str, Any]:
    """A 200 of ``json_body`` (a schema), a ``text/event-stream``, or either."""
    content: dict[str, Any] = {}
    if json_body is not None:
        content["application/json"] = {"schema": json_body}
    if stream:
        content.update(_SSE)
    out: dict[str, Any] = {"200": {"description": description, "content": content}}
    if protocol:  # the operation reads ``stream_protocol``
        out["422"] = _UNPROCESSABLE
    return out


# --- request helpers ---------------------------------------------------------------------------------
def run_body() -> dict[str, Any]:
    """The 1.11 body, or the 1.10 body (``background`` / ``inputs``) translated; 422 otherwise."""
    raw = request_json(empty={})
    if isinstance(raw, dict) and ("background" in raw or "inputs" in raw) and "mode" not in raw:
        body = services.translate_legacy(load(_LEGACY, raw))
    else:
        body = load(_RUN, raw)
    if body["stream_protocol"] not in schemas.PROTOCOLS:
        raise ApiError(
            422,
            {
                "error": "Unknown stream protocol",
                "code": "UNKNOWN_STREAM_PROTOCOL",
                "message": f"Unknown stream_protocol {body['stream_protocol']!r}",
                "available": list(schemas.PROTOCOLS),
            },
        )
    body["flow_id"] = str(body["flow_id"])
    return body


def _prepare(req: runs.RunRequest, flow_id: str) -> runs.PreparedRun:
    try:
        return runs.prepare(req)
    except runs.FlowNotFound:
        raise ApiError(404, services.not_found(flow_id)) from None


def _job(job_id: str, owner: str) -> Any:
    info = appstate.jobs().info_for(job_id, owner)
    if info is None or info.name not in _JOBS:
        raise ApiError(404, services.job_not_found(job_id))
    return info


def _current(job_id: str, owner: str) -> Any:
    """The job that now carries the run ``job_id`` started: itself, or the job it was resumed as.

    A paused background run (``suspended``) or a sync run that paused (no job of its own) reads the
    state of the job that continued it (``core.runs.resumes``: the checkpoints record where a run went on).
    """
    info = resumes.current(appstate.jobs(), owner, job_id)
    if info is None or info.name not in _JOBS:
        raise ApiError(404, services.job_not_found(job_id))
    return info


# --- run ------------------------------------------------------------------------------------------------
@blp.route("", methods=["POST"])
@blp.doc(
    requestBody={"content": {"application/json": {"schema": schemas.WorkflowRunSchema}}, "required": True},
    responses=_ok(
        "v2 response (sync), job (background), or text/event-stream (stream)",
        json_body=_RESPONSE_OR_JOB,
        stream=True,
        protocol=True,
    ),
)
@authenticated("user")
def run_workflow():
    """Run a flow: ``sync`` (the v2 response), ``stream`` (reference framing or AG-UI) or ``background`` (a job)."""
    body = run_body()
    owner = current_actor().owner_id
    req = services.run_request(body, owner, request_variables(request.headers))
    if body["mode"] == "background":
        return _background(req, body, owner)
    prepared = _prepare(req, body["flow_id"])
    if body["mode"] == "stream":
        return sse.response(streams.live(prepared, body["stream_protocol"], body["output_ids"]))
    run_id = services.new_run_id()  # a paused run is resumed under it: POST /{run_id}/resume
    outcome = runs.execute(prepared, job_id=run_id)
    return services.response(
        outcome,
        flow_id=prepared.flow.id,
        session_id=req.session_id,
        job_id=run_id,
        output_ids=body["output_ids"],
        globals_=body["globals"],
    )


def _background(req: runs.RunRequest, body: dict[str, Any], owner: str) -> dict[str, Any]:
    """Start ``workflows.run``; a reused ``idempotency_key`` of the same owner returns the first job."""
    jobs, shared, ttl = appstate.jobs(), appstate.shared(), float(appstate.settings().job_event_ttl_seconds)
    job_id = services.new_run_id()
    key = body.get("idempotency_key")
    if key:
        digest = hashlib.sha256(key.encode()).hexdigest()[:40]
        mark = f"workflows:idempotency:{owner}:{digest}"
        if not shared.cas(mark, None, job_id, ttl=ttl):
            first = shared.get(mark)
            info = jobs.info_for(first, owner) if first else None
            if info is not None:
                return services.background_response(info.id, str(info.meta.get("flow_id") or body["flow_id"]))
            shared.put(mark, job_id, ttl=ttl)
    prepared = _prepare(req, body["flow_id"])  # 404 / 403 / 422 now, not in the job
    flow_id = prepared.flow.id
    req.flow = flow_id
    run_jobs.enqueue(
        req,
        owner=owner,
        job_id=job_id,
        job=RUN_JOB,
        shaper=SHAPER,
        hold_end=True,
        args={"output_ids": body["output_ids"], "globals_": body["globals"]},
        meta={
            "flow_id": flow_id,
            "surface": "workflows",
            "stream_protocol": body["stream_protocol"],
            "session_id": req.session_id or flow_id,  # the AG-UI thread id of its events
        },
    )
    return services.background_response(job_id, flow_id, body["globals"])


# --- jobs -----------------------------------------------------------------------------------------------
@blp.route("", methods=["GET"])
@blp.doc(
    parameters=[{"in": "query", "name": "job_id", "required": True, "schema": {"type": "string"}}],
    responses=_ok("the job's status, then the v2 response", json_body=_RESPONSE_OR_JOB),
)
@authenticated("user")
def workflow_status():
    """A background run: its status while it goes, then the v2 response (another user's job is 404)."""
    job_id = request.args.get("job_id") or ""
    if not job_id:
        raise ValidationFailed([{"loc": ["query", "job_id"], "msg": "Field required", "type": "missing"}])
    info = _current(job_id, current_actor().owner_id)
    return streams.status(info)


@blp.route("/<job_id>/events", methods=["GET"])
@blp.doc(
    parameters=[
        {"in": "query", "name": "stream_protocol", "required": False, "schema": {"type": "string"}},
        {"in": "header", "name": "Last-Event-ID", "required": False, "schema": {"type": "string"}},
    ],
    responses=_ok("text/event-stream, replayable from Last-Event-ID", stream=True, protocol=True),
)
@authenticated("user")
def workflow_events(job_id: str):
    """Re-attach to a background run: its events from the start, or after ``Last-Event-ID``."""
    info = _job(job_id, current_actor().owner_id)
    protocol = request.args.get("stream_protocol") or info.meta.get("stream_protocol") or "service"
    if protocol not in schemas.PROTOCOLS:
        raise ApiError(
            422,
            {
                "error": "Unknown stream protocol",
                "code": "UNKNOWN_STREAM_PROTOCOL",
                "message": f"Unknown stream_protocol {protocol!r}",
                "available": list(schemas.PROTOCOLS),
            },
        )
    after = request.headers.get("Last-Event-ID") or request.args.get("last_event_id") or None
    return sse.response(streams.replay(appstate.jobs(), info, protocol, after))


@blp.route("/stop", methods=["POST"])
@blp.doc(
    requestBody={"content": {"application/json": {"schema": schemas.StopSchema}}, "required": True},
    responses=_ok("{job_id, status, message}", json_body=schemas.StopResultSchema),
)
@authenticated("user")
def stop_workflow():
    """Stop a background run (between components, on any process and either job backend)."""
    body = load(schemas.StopSchema(), request_json(empty={}))
    info = _current(body["job_id"], current_actor().owner_id)
    stopped = appstate.jobs().cancel(info.id)
    return {
        "job_id": info.id,
        "status": "cancelled" if stopped else streams.STATUS.get(info.state.value, info.state.value),
        "message": "Workflow stopped" if stopped else "Workflow already ended",
    }


@blp.route("/pending", methods=["GET"])
@blp.doc(
    parameters=[{"in": "query", "name": "flow_id", "required": False, "schema": {"type": "string"}}],
    responses=_ok("the paused runs, oldest first", json_body=schemas.PendingListSchema),
)
@authenticated("user")
def pending_requests():
    """The caller's paused runs waiting for an answer (human in the loop), oldest first."""
    owner = current_actor().owner_id
    items = checkpoints.pending(owner, request.args.get("flow_id") or None)
    return {"pending": [streams.pending_item(cp) for cp in items]}


@blp.route("/<job_id>/resume", methods=["POST"])
@blp.doc(
    requestBody={"content": {"application/json": {"schema": schemas.ResumeSchema}}, "required": True},
    responses=_ok("the job that continues the run (as a background start)", json_body=schemas.WorkflowJobSchema),
)
@authenticated("user")
def resume_workflow(job_id: str):
    """Answer a paused run: it continues as a new background job (404 foreign, 409 answered, 410 expired)."""
    body = load(schemas.ResumeSchema(), request_json(empty={}))
    owner = current_actor().owner_id
    found = checkpoints.get(body["request_id"], owner)
    if found is None or (found.job_id and found.job_id != job_id):
        raise ApiError(404, f"Pending request {body['request_id']} not found")
    paused = appstate.jobs().info_for(job_id, owner)  # None when the run paused in a sync or live stream
    protocol = (paused.meta.get("stream_protocol") if paused is not None else None) or "service"
    session_id = json.loads(found.data).get("session_id") or found.flow_id  # the AG-UI thread goes on
    # the paused id keeps answering: its status and stop follow the job that continues the run (core.runs.resumes)
    new_job = run_jobs.resume(
        body["request_id"],
        owner,
        body["decision"],
        job=RESUME_JOB,
        shaper=SHAPER,
        paused_job_id=job_id,
        meta={"stream_protocol": protocol, "resumed_from": job_id, "session_id": session_id},
    )
    return services.background_response(new_job, found.flow_id)


# --- anonymous public runs ------------------------------------------------------------------------------
@blp.route("/public", methods=["POST"])
@blp.doc(
    security=[{}],
    requestBody={"content": {"application/json": {"schema": schemas.WorkflowRunSchema}}, "required": True},
    responses=_ok("text/event-stream", stream=True, protocol=True),
)
@public.rate_limited("workflows_public")
def run_public_workflow():
    """Run a publicly shared flow anonymously: stream mode only, stored flow only, ``client_id`` cookie."""
    visitor = public.visitor()
    raw = request_json(empty={})
    if isinstance(raw, dict):
        sent = [name for name in PUBLIC_FORBIDDEN if raw.get(name) not in (None, {}, [])]
        if sent:
            raise ValidationFailed(
                [{"loc": ["body", n], "msg": "Not allowed for a public flow", "type": "extra_forbidden"} for n in sent]
            )
    body = run_body()
    if body["mode"] != "stream":
        raise ValidationFailed(
            [{"loc": ["body", "mode"], "msg": "Public flows run in stream mode only", "type": "literal_error"}]
        )
    req = runs.RunRequest(
        flow=body["flow_id"],
        user_id=None,
        surface="workflows_public",
        inputs=[runs.RunInput(body.get("input_value") or "", "chat")],
        public=True,
        principal=visitor.principal,
    )
    try:
        prepared = runs.resolve(req)
    except runs.FlowNotFound:
        raise ApiError(404, services.not_found(body["flow_id"])) from None
    stored_id = prepared.flow.id
    # a signed-in visitor keeps the conversation in their shared messages; the run still acts anonymously
    virtual, messages_as = visitor.conversation(stored_id)
    if messages_as is not None:
        req.messages_as = messages_as
    req.run_flow_id = virtual
    req.session_id = public.session(virtual, body.get("session_id")) or virtual
    runs.build(prepared)
    return sse.response(streams.live(prepared, body["stream_protocol"], None, public=True))
