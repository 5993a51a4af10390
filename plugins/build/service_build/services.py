"""Build logic without request objects: what a build runs, starting it as a job, public principals.

A build is described by a :class:`BuildRequest` (plain JSON: it travels to
the job, possibly on another machine). :func:`run_build` is what the job
(and the deprecated synchronous vertex build) executes: resolve the flow,
build the graph, run it with a :func:`core.runs.make_context` context, and
refresh the partial-build cache.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask

from core.app import state
from core.engine import Graph, GraphValidationError, RunResult, VertexResult, run_graph
from core.runs import make_context, registry
from service_build import cache
from service_build.config import runtime
from service_build.events import error_payload

log = logging.getLogger(__name__)

BUILD_JOB = "build.flow"
PUBLIC_OWNER_PREFIX = "public:"
_PUBLIC_NS = uuid.UUID("5a4c6d1e-8f0b-4c1e-9a57-3d2b1f0e7c11")  # anonymous principals of public builds


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

    def kwargs(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def session_id(self) -> str:
        return self.session or self.run_flow_id


# --- public principals ------------------------------------------------------------------------
def public_principal(client_id: str) -> str:
    """The anonymous principal of a ``client_id`` cookie: a stable uuid, never a user's id."""
    return str(uuid.uuid5(_PUBLIC_NS, f"client:{client_id}"))


def public_owner(client_id: str) -> str:
    return PUBLIC_OWNER_PREFIX + public_principal(client_id)


def virtual_flow_id(client_id: str, flow_id: str) -> str:
    """The flow id a public visitor's messages live under (the reference's ``uuid5(DNS, client_id + "_" + id)``)."""
    return str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{client_id}_{flow_id}"))


def public_session(virtual_id: str, session: str | None) -> str | None:
    """``inputs.session`` namespaced under the virtual flow id (idempotent)."""
    if not session:
        return None
    prefix = f"{virtual_id}:"
    return session if session.startswith(prefix) else prefix + session


# --- running ----------------------------------------------------------------------------------
def _files_tweaks(data: dict[str, Any], files: list[str] | None) -> dict[str, Any] | None:
    if not files:
        return None
    tweaks: dict[str, Any] = {}
    for node in data.get("nodes") or []:
        if isinstance(node, dict) and isinstance(node.get("data"), dict) and node["data"].get("type") == "ChatInput":
            tweaks[str(node.get("id"))] = {"files": list(files)}
    return tweaks or None


def release_db(app: Flask) -> None:
    """End this thread's database session now, returning its connection to the pool.

    Called before anything long (a run, a blocking read of events): a session
    that only read something would otherwise hold its connection until the
    request or job ends (with SQLite's single connection, blocking every
    other request; with PostgreSQL, exhausting the pool under many streams).
    """
    factory = app.extensions.get("service.db")
    if factory is not None:
        factory.remove()


def load_flow_data(app: Flask, req: BuildRequest) -> tuple[dict[str, Any], str | None] | None:
    """The graph to build and the flow name, or None when the flow is gone (or no longer PUBLIC)."""
    if req.data is not None and not req.public:
        return req.data, req.flow_name
    hook = state(app).host.hook
    flow = hook.find_flow(
        user_id=None if req.public else req.run_user_id, flow_id_or_name=req.flow_id, public=req.public
    )
    release_db(app)
    if flow is None:
        return None
    return (flow.get("data") or {}), (req.flow_name or flow.get("name"))


def graph_error_text(errors: list[dict[str, Any]]) -> str:
    first = errors[0] if errors else {"msg": "Invalid flow"}
    where = ".".join(str(p) for p in first.get("loc") or [])
    text = f"Invalid flow: {first.get('msg')}" + (f" ({where})" if where else "")
    if len(errors) > 1:
        text += f" and {len(errors) - 1} more error(s)"
    return text


@dataclass
class Prepared:
    """A build ready to run: the validated graph and what the partial-build cache needs."""

    graph: Graph
    data: dict[str, Any]
    name: str | None
    prints: dict[str, str]
    structure: dict[str, str]
    key: str

    def cached(self, app: Flask, *, any_inputs: bool = False) -> tuple[dict[str, Any] | None, dict[str, VertexResult]]:
        """The cache entry and its results still valid for this graph and these inputs (or any inputs)."""
        entry = _cache_get(runtime(app).store, self.key)
        if any_inputs:
            return entry, cache.reusable(entry, self.structure, self.graph, field="sfp")
        return entry, cache.reusable(entry, self.prints, self.graph)


def prepare(app: Flask, req: BuildRequest, emit: Callable[[str, Any], Any]) -> Prepared | None:
    """Resolve the flow and build its graph; on failure send the ``error`` event and return None."""
    loaded = load_flow_data(app, req)
    if loaded is None:
        emit(
            "error",
            error_payload(
                f"Flow with id {req.flow_id} not found", flow_id=req.run_flow_id, session_id=req.session_id()
            ),
        )
        return None
    data, name = loaded
    try:
        graph = Graph.build(data, registry(app), tweaks=_files_tweaks(data, req.files))
    except GraphValidationError as exc:
        emit(
            "error",
            error_payload(
                graph_error_text(exc.errors), flow_id=req.run_flow_id, session_id=req.session_id(), errors=exc.errors
            ),
        )
        return None
    prints = cache.fingerprints(
        graph,
        data,
        {
            "input_value": req.input_value,
            "input_type": req.input_type,
            "input_components": req.input_components,
            "files": req.files,
        },
    )
    structure = cache.fingerprints(graph, data, None)
    return Prepared(graph, data, name, prints, structure, cache.cache_key(req.owner, req.run_flow_id))


def run_build(
    app: Flask,
    req: BuildRequest,
    *,
    emit: Callable[[str, Any], Any],
    cancelled: Callable[[], bool] | None = None,
    job_id: str | None = None,
    prepared: Prepared | None = None,
) -> RunResult | None:
    """Run one build, sending its events to ``emit``; None when it could not start (an ``error`` was sent)."""
    prep = prepared or prepare(app, req, emit)
    if prep is None:
        return None
    context = make_context(
        user_id=req.run_user_id,
        flow={"id": req.run_flow_id, "name": prep.name},
        session_id=req.session,
        emit=emit if req.log_builds else None,
        cancelled=cancelled,
        job_id=job_id,
        app=app,
    )
    if not req.log_builds:
        context.emit = emit  # events only: no vertex-build records
    entry, valid = prep.cached(app)
    previous = valid if req.start_component_id else None
    result = run_graph(
        prep.graph,
        context,
        input_value=req.input_value,
        input_type=req.input_type or "chat",
        input_components=req.input_components,
        start_component_id=req.start_component_id,
        stop_component_id=req.stop_component_id,
        previous_results=previous,
        registry=registry(app),
    )
    if result.status != "cancelled":
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
    return result


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
    jobs = state(app).jobs
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
        jobs.enqueue(BUILD_JOB, owner=req.owner, kwargs=req.kwargs(), job_id=job_id, meta=meta)
    except Exception:
        if watched:
            rt.store.unwatch(job_id)
        raise
    rt.store.incr("builds_started")
    return job_id
