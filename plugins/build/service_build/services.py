"""Build logic without request objects: what a build runs, starting it as a job, public principals.

A build is described by a :class:`BuildRequest` (plain JSON: it travels to
the job, possibly on another machine). It becomes a :class:`core.runs.RunRequest`
for the core's run service; what is the build's own is the partial-build
cache (results reused by ``start_component_id`` builds, :func:`for_cache`,
:func:`store_results`), the job's delivery modes and the public principals.
A build job is the core's run job with the ``build.events`` shaper
(:mod:`service_build.jobs`); :func:`run_build` is what the deprecated
synchronous vertex build executes.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask

from core import db, runs
from core.contracts import FlowRecord
from core.engine import Graph, RunEvent, RunFailed, VertexResult
from core.errors import ApiError, ValidationFailed
from core.runs import jobs as run_jobs
from service_build import cache
from service_build.config import runtime
from service_build.events import error_payload

log = logging.getLogger(__name__)

BUILD_JOB = "build.flow"
#: the result shaper of build jobs (service_build.jobs)
SHAPER = "build.events"


@dataclass
class BuildRequest:
    """Everything a build job needs (JSON only)."""

    owner: str  # job owner and partial-cache owner (user id, or "public:<uuid>")
    run_user_id: str  # the user id of the run context (the anonymous principal's uuid for public builds)
    flow_id: str  # the stored flow
    run_flow_id: str  # the flow id the run records messages and vertex builds under (virtual for public)
    public: bool = False
    flow_name: str | None = None
    data: dict[str, Any] | None = None  # an unsaved graph from the editor (never for public builds)
    session: str | None = None
    input_value: str | None = None
    input_type: str = "chat"
    input_components: list[str] | None = None
    files: list[str] | None = None
    start_component_id: str | None = None
    stop_component_id: str | None = None
    log_builds: bool = True
    #: a signed-in visitor of a public flow: their conversation is kept in their message store
    messages_as: str | None = None
    #: the flow as the request resolved it (looked up once, in the request; the job does not look again)
    flow: dict[str, Any] | None = None

    def kwargs(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def session_id(self) -> str:
        return self.session or self.run_flow_id

    def run_request(self) -> runs.RunRequest:
        """The core's run request for this build."""
        return runs.RunRequest(
            flow=self.flow_id,
            user_id=None if self.public else self.run_user_id,
            surface="build_public" if self.public else "build",
            inputs=[runs.RunInput(self.input_value, self.input_type or "chat", self.input_components, self.session)],
            public=self.public,
            principal=self.run_user_id if self.public else None,
            run_flow_id=self.run_flow_id,
            flow_name=self.flow_name,
            data=self.data,
            files=self.files,
            start_component_id=self.start_component_id,
            stop_component_id=self.stop_component_id,
            log_builds=self.log_builds,
            messages_as=self.messages_as,
        )

    def resolve(self, app: Flask | None = None) -> runs.PreparedRun:
        """Look the flow up and ask ``check_run`` (404/403), once: the job reuses what it found."""
        prepared = runs.resolve(self.run_request(), app)
        self.flow = prepared.flow.as_dict()  # the job payload's JSON
        self.data = None  # it is in ``flow`` now
        if self.flow_name is None:
            self.flow_name = prepared.flow.name
        return prepared


# --- running ----------------------------------------------------------------------------------
def graph_error_text(errors: list[dict[str, Any]]) -> str:
    first = errors[0] if errors else {"msg": "Invalid flow"}
    where = ".".join(str(p) for p in first.get("loc") or [])
    text = f"Invalid flow: {first.get('msg')}" + (f" ({where})" if where else "")
    if len(errors) > 1:
        text += f" and {len(errors) - 1} more error(s)"
    return text


@dataclass
class Prepared:
    """A build ready to run: the core's prepared run and what the partial-build cache needs."""

    run: runs.PreparedRun
    prints: dict[str, str]
    structure: dict[str, str]
    key: str

    @property
    def graph(self) -> Graph:
        assert self.run.graph is not None
        return self.run.graph

    def cached(self, app: Flask, *, any_inputs: bool = False) -> tuple[dict[str, Any] | None, dict[str, VertexResult]]:
        """The cache entry and its results still valid for this graph and these inputs (or any inputs)."""
        entry = _cache_get(runtime(app).store, self.key)
        if any_inputs:
            return entry, cache.reusable(entry, self.structure, self.graph, field="sfp")
        return entry, cache.reusable(entry, self.prints, self.graph)


def _error(emit: Callable[[RunEvent], Any], req: BuildRequest, text: str, **extra: Any) -> None:
    emit(RunFailed(text, data=error_payload(text, flow_id=req.run_flow_id, session_id=req.session_id(), **extra)))


def prepare(app: Flask, req: BuildRequest, emit: Callable[[RunEvent], Any]) -> Prepared | None:
    """The run and its graph; on failure send the ``error`` event and return None."""
    try:
        prepared = (
            runs.PreparedRun(req.run_request(), FlowRecord.from_dict(req.flow))
            if req.flow is not None
            else req.resolve(app)
        )
        db.release(app)
        runs.build(prepared, app)
    except runs.FlowNotFound:
        _error(emit, req, f"Flow with id {req.flow_id} not found")
        return None
    except ValidationFailed as exc:
        _error(emit, req, graph_error_text(list(exc.detail)), errors=exc.detail)
        return None
    except ApiError as exc:  # refused by check_run
        _error(emit, req, str(exc.detail))
        return None
    return for_cache(prepared, req.owner)


def for_cache(prepared: runs.PreparedRun, owner: str) -> Prepared:
    """A built run with what the partial-build cache needs: the vertices' fingerprints, the cache key."""
    graph = prepared.graph
    assert graph is not None
    data = prepared.flow.data or {}
    req = prepared.request
    first = req.inputs[0] if req.inputs else runs.RunInput()
    prints = cache.fingerprints(
        graph,
        data,
        {
            "input_value": first.value,
            "input_type": first.type,
            "input_components": first.components,
            "files": req.files,
        },
    )
    structure = cache.fingerprints(graph, data, None)
    return Prepared(prepared, prints, structure, cache.cache_key(owner, prepared.flow_id))


def store_results(app: Flask, prep: Prepared, entry: dict[str, Any] | None, outcome: runs.RunOutcome) -> None:
    """Keep the vertices' results of a build that was not cancelled, for the next partial build."""
    result = outcome.results[-1]
    if result.status == "cancelled":
        return
    rt = runtime(app)
    try:
        rt.store.cache_put(
            prep.key,
            cache.updated_entry(entry, prep.prints, prep.graph, result.results, prep.structure),
            rt.config.cache_ttl_seconds,
            rt.config.cache_max_bytes,
        )
    except Exception:  # the cache is an optimisation: never fail a build for it
        log.warning("build cache write failed for %s", prep.key, exc_info=True)


def run_build(
    app: Flask,
    req: BuildRequest,
    *,
    emit: Callable[[RunEvent], Any],
    cancelled: Callable[[], bool] | None = None,
    job_id: str | None = None,
    prepared: Prepared | None = None,
) -> runs.RunOutcome | None:
    """Run one build, sending its events to ``emit``; None when it could not start (an ``error`` was sent)."""
    prep = prepared or prepare(app, req, emit)
    if prep is None:
        return None
    entry, valid = prep.cached(app)
    previous = valid if req.start_component_id else None
    outcome = runs.execute(prep.run, emit=emit, cancelled=cancelled, job_id=job_id, previous_results=previous, app=app)
    store_results(app, prep, entry, outcome)
    return outcome


def _cache_get(store: Any, key: str) -> dict[str, Any] | None:
    try:
        entry: dict[str, Any] | None = store.cache_get(key)
        return entry
    except Exception:
        log.warning("build cache read failed for %s", key, exc_info=True)
        return None


# --- starting ---------------------------------------------------------------------------------
def start_build(app: Flask, req: BuildRequest, delivery: str) -> str:
    """Enqueue the build job; polling builds are watched for abandonment from this moment."""
    rt = runtime(app)
    job_id = str(uuid.uuid4())
    meta = {
        "flow_id": req.flow_id,
        "run_flow_id": req.run_flow_id,
        "session_id": req.session_id(),
        "delivery": delivery,
        "public": req.public,
    }
    watched = delivery == "polling"
    if watched:
        rt.store.watch(job_id)
    try:
        run_jobs.enqueue(
            req.run_request(),
            owner=req.owner,
            job_id=job_id,
            job=BUILD_JOB,
            shaper=SHAPER,
            flow=FlowRecord.from_dict(req.flow) if req.flow is not None else None,
            meta=meta,
            base_meta=False,
            app=app,
        )
    except Exception:
        if watched:
            rt.store.unwatch(job_id)
        raise
    rt.store.incr("builds_started")
    return job_id
