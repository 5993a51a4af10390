"""HTTP endpoints of build jobs (paths, codes and framing as the reference serves them).

* ``/api/v1/build/{flow_id}/flow``, ``/api/v1/build/{job_id}/events``, ``/api/v1/build/{job_id}/cancel``
* ``/api/v1/build_public_tmp/...``: the same for PUBLIC flows, anonymous, per ``client_id`` cookie
* the deprecated vertex operations live in :mod:`service_build.vertices`
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from flask import Response, current_app
from flask_smorest import Blueprint

from core import appstate, db, openapi
from core.auth import authenticated, current_actor
from core.errors import ApiError
from core.jobs import JobInfo
from core.requests import body_limit
from core.runs import FlowNotFound, public
from service_build import schemas
from service_build.config import runtime
from service_build.events import NDJSON, TERMINAL, frame, ndjson, poll, stream
from service_build.services import (
    BUILD_JOB,
    BuildRequest,
    start_build,
)
from service_build.watchdog import WATCHDOG

build_blp = Blueprint("build", __name__, url_prefix="/api/v1/build", description="Chat (build jobs)")
public_blp = Blueprint(
    "build_public", __name__, url_prefix="/api/v1/build_public_tmp", description="Chat (public build jobs)"
)

CANCELLED_MESSAGE = "Flow build cancelled successfully"
_NDJSON_DOC = {
    "200": {
        "description": "events, one JSON object per event followed by a blank line",
        "content": {NDJSON: {"schema": {"type": "string"}}},
    }
}
_STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


# --- helpers ------------------------------------------------------------------------------------------
def _ensure_watchdog() -> None:
    rt = runtime()
    WATCHDOG.ensure(appstate.jobs(), rt.store, rt.config)


def _job_for(job_id: str, owner: str) -> JobInfo:
    """The owner's build job, else 404 (unknown, expired, another owner's, or not a build)."""
    info = appstate.jobs().info_for(job_id, owner)
    if info is None or info.name != BUILD_JOB:
        raise ApiError(404, f"Job not found: {job_id}")
    return info


def _inputs(body: dict[str, Any]) -> dict[str, Any]:
    return body.get("inputs") or {}


def _request(
    *,
    owner: str,
    run_user_id: str,
    flow_id: str,
    run_flow_id: str,
    public: bool,
    query: dict[str, Any],
    body: dict[str, Any],
    session: str | None,
) -> BuildRequest:
    inputs = _inputs(body)
    return BuildRequest(
        owner=owner,
        run_user_id=run_user_id,
        flow_id=flow_id,
        run_flow_id=run_flow_id,
        public=public,
        flow_name=query.get("flow_name"),
        data=None if public else body.get("data"),
        session=session,
        input_value=inputs.get("input_value"),
        input_type=inputs.get("type") or "chat",
        input_components=inputs.get("components") or None,
        files=body.get("files") or None,
        start_component_id=query.get("start_component_id") or None,
        stop_component_id=query.get("stop_component_id") or None,
        log_builds=bool(query.get("log_builds", True)),
    )


def _resolve(req: BuildRequest) -> None:
    """Find the flow and ask ``check_run`` once, in the request (404 / 403); the job reuses it."""
    try:
        req.resolve()
    except FlowNotFound:
        raise ApiError(404, f"Flow with id {req.flow_id} not found") from None


def _stream_response(job_id: str, meta: dict[str, Any], *, cancel_on_close: bool) -> Response:
    """The NDJSON stream of a job; a ``direct`` build is cancelled when its client goes away before the end."""
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    jobs = appstate.jobs(app)
    rt = runtime(app)

    def touch() -> None:
        rt.store.touch(job_id)

    def generate() -> Iterator[str]:
        ended = False
        try:
            for name, data in stream(jobs, job_id, meta, block_seconds=rt.config.stream_block_seconds, touch=touch):
                ended = name in TERMINAL
                yield frame(name, data)
        finally:
            if cancel_on_close and not ended:
                # A stream its client dropped may be closed by the garbage collector, in whatever thread runs then:
                # the job's own, in the middle of an emit that holds the lock a cancel takes (a deadlock a test run
                # hit). A finaliser takes no lock: the cancel runs in a thread of its own.
                threading.Thread(target=jobs.cancel, args=(job_id,), name="build-cancel", daemon=True).start()

    return Response(generate(), mimetype=NDJSON, headers=_STREAM_HEADERS)


def _events(info: JobInfo, delivery: str) -> Response:
    rt = runtime()
    meta = info.meta or {}
    rt.store.touch(info.id)
    db.release(current_app)  # nothing below needs the database: do not hold a connection while waiting
    if delivery == "polling":
        events = poll(appstate.jobs(), rt.store, info.id, meta, wait_seconds=rt.config.poll_wait_seconds)
        return Response(ndjson(events), mimetype=NDJSON, headers={"Cache-Control": "no-cache"})
    return _stream_response(info.id, meta, cancel_on_close=False)


def _cancel(info: JobInfo) -> dict[str, Any]:
    appstate.jobs().cancel(info.id)
    runtime().store.unwatch(info.id)
    return {"success": True, "message": CANCELLED_MESSAGE}


def _started(req: BuildRequest, delivery: str) -> Any:
    _ensure_watchdog()
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    db.release(app)  # the job needs a connection at once (SQLite has one), the request none any more
    job_id = start_build(app, req, delivery)
    if delivery == "direct":
        meta = {"flow_id": req.flow_id, "run_flow_id": req.run_flow_id, "session_id": req.session_id()}
        return _stream_response(job_id, meta, cancel_on_close=True)
    return {"job_id": job_id}


# --- authenticated builds -----------------------------------------------------------------------------
@build_blp.route("/<flow_id>/flow", methods=["POST"])
@body_limit("flow")
@build_blp.arguments(schemas.BuildQuerySchema, location="query", as_kwargs=False)
@build_blp.arguments(schemas.BuildBodySchema, location="json", required=False, as_kwargs=False)
@build_blp.response(200, schemas.JobIdSchema)
@build_blp.doc(
    responses={
        "200": {
            "description": "{job_id}; with event_delivery=direct, the NDJSON event stream",
            "content": {NDJSON: {"schema": {"type": "string"}}},
        }
    }
)
@authenticated("user")
def build_flow(query: dict[str, Any], body: dict[str, Any] | None, flow_id: str):
    """Build a flow as a job: the caller's stored flow, or the unsaved graph in ``data``."""
    body = body or {}
    actor = current_actor()
    req = _request(
        owner=actor.owner_id,
        run_user_id=actor.owner_id,
        flow_id=flow_id,
        run_flow_id=flow_id,
        public=False,
        query=query,
        body=body,
        session=_inputs(body).get("session") or None,
    )
    _resolve(req)
    req.flow_id = req.run_flow_id = str((req.flow or {})["id"])
    return _started(req, query["event_delivery"])


@build_blp.route("/<job_id>/events", methods=["GET"])
@build_blp.arguments(schemas.EventsQuerySchema, location="query", as_kwargs=False)
@build_blp.doc(responses=_NDJSON_DOC)
@authenticated("user")
def build_events(query: dict[str, Any], job_id: str):
    """The job's events: streamed (default) until ``end``/``error``, or what arrived since the last poll."""
    _ensure_watchdog()
    return _events(_job_for(job_id, current_actor().owner_id), query["event_delivery"])


@build_blp.route("/<job_id>/cancel", methods=["POST"])
@build_blp.response(200, schemas.CancelSchema)
@build_blp.doc(requestBody=openapi.no_body("the job is named by the path"))
@authenticated("user")
def cancel_build(job_id: str):
    """Cancel the caller's build (stops between vertices, on any web process and either backend)."""
    return _cancel(_job_for(job_id, current_actor().owner_id))


# --- public builds ------------------------------------------------------------------------------------
@public_blp.route("/<flow_id>/flow", methods=["POST"])
@body_limit("flow")
@public_blp.arguments(schemas.BuildQuerySchema, location="query", as_kwargs=False)
@public_blp.arguments(schemas.PublicBuildBodySchema, location="json", required=False, as_kwargs=False)
@public_blp.response(200, schemas.JobIdSchema)
@public_blp.doc(security=[{}])
@public.rate_limited("build_public")
def build_public_flow(query: dict[str, Any], body: dict[str, Any] | None, flow_id: str):
    """Build a PUBLIC flow anonymously: stored definition only, as the ``client_id`` cookie's principal."""
    body = body or {}
    visitor = public.visitor()
    if body.get("data") is not None:
        raise ApiError(400, "Flow data cannot be sent for a public flow: its stored definition is used")
    req = _request(
        owner=visitor.job_owner,
        run_user_id=visitor.principal,
        flow_id=flow_id,
        run_flow_id=flow_id,
        public=True,
        query=query,
        body=body,
        session=None,
    )
    _resolve(req)
    stored_id = req.flow_id = str((req.flow or {})["id"])
    # the visitor's conversation: theirs when signed in; the run still acts as the anonymous principal
    req.run_flow_id, messages_as = visitor.conversation(stored_id)
    if messages_as is not None:
        req.messages_as = messages_as
    req.session = public.session(req.run_flow_id, _inputs(body).get("session"))
    return _started(req, query["event_delivery"])


@public_blp.route("/<job_id>/events", methods=["GET"])
@public_blp.arguments(schemas.EventsQuerySchema, location="query", as_kwargs=False)
@public_blp.doc(responses=_NDJSON_DOC, security=[{}])
def public_build_events(query: dict[str, Any], job_id: str):
    """Events of a public build started with the same ``client_id`` cookie."""
    _ensure_watchdog()
    return _events(_job_for(job_id, public.job_owner(public.client_id())), query["event_delivery"])


@public_blp.route("/<job_id>/cancel", methods=["POST"])
@public_blp.response(200, schemas.CancelSchema)
@public_blp.doc(security=[{}], requestBody=openapi.no_body("the job is named by the path"))
def cancel_public_build(job_id: str):
    """Cancel a public build started with the same ``client_id`` cookie."""
    return _cancel(_job_for(job_id, public.job_owner(public.client_id())))
