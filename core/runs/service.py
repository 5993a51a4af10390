"""The run service: the one path from a run request to a result, an event stream or a job.

Every run surface (the v1 run API, webhooks, build jobs, and the v2, MCP,
A2A and responses surfaces) turns its request into a :class:`RunRequest`
and calls this module::

    prepared = prepare(RunRequest(flow="my-flow", user_id=owner, surface="run", inputs=[RunInput("hi")]))
    outcome = execute(prepared)                 # in the request
    for item in stream(prepared): ...           # typed events, then the RunOutcome
    job_id = enqueue(request)                   # in the background (job "runs.flow")

In one place: flow lookup (``find_flow``, owner-scoped; public flows for
anonymous principals), the ``check_run`` veto, tweak policy and internal
tweaks (webhook payloads, chat files), graph validation, the run context
(variables, sub-flows, message storage batched per run, vertex-build
records, session namespacing, time limits, cancellation), and suspension:
a run that pauses writes a checkpoint (:mod:`core.runs.checkpoints`) that any
process resumes with :func:`resume`.

A surface only translates: its request into a ``RunRequest``, and the typed
events (:mod:`core.engine.events`) into its wire format (:mod:`core.runs.wire`).
"""

from __future__ import annotations

import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app

from core import groupcommit
from core.appstate import state
from core.contracts import FlowRecord, RunEnded, RunStarted
from core.engine import (
    Graph,
    GraphValidationError,
    Registry,
    RunEvent,
    RunResult,
    Suspended,
    VertexResult,
)
from core.engine import execution as engine_run
from core.engine.errors import RunRefused
from core.engine.observe import RunWatch
from core.errors import ApiError, ValidationFailed, validation_error
from core.requests import NUL_MSG, refuse_nul
from core.runs import tweaks as tweak_rules
from core.runs.hook_ports import hook_ports, make_context, registry
from core.runs.observing import RequestJson, Watch, ended_of, ending_hook, tell_end
from core.runs.subflows import check_subflows

log = logging.getLogger(__name__)


#: the surfaces that run a flow as last saved (the editor and its Playground); every other surface runs the
#: flow's published version when it has one (``find_flow(draft=...)``, docs/versions.md)
DRAFT_SURFACES = frozenset({"build"})

#: namespace of the virtual flow ids of signed-in users' conversations with flows shared with them


@dataclass
class RunInput:
    """One run of the flow: an input value for the input components, and its session."""

    value: str | None = None
    type: str = "chat"
    components: list[str] | None = None
    session: str | None = None


@dataclass
class RunRequest:
    """What to run, for whom, from which surface. Plain JSON (it travels to jobs on other machines)."""

    flow: str  # flow id or endpoint name
    user_id: str | None  # the owner the run acts for; None for anonymous public runs
    surface: str = "run"
    inputs: list[RunInput] = field(default_factory=lambda: [RunInput()])
    tweaks: dict[str, Any] | None = None  # client tweaks (SERVICE_TWEAKS_POLICY applies)
    session_id: str | None = None  # default session of every input (flow id when unset)
    request_vars: dict[str, str] = field(default_factory=dict)
    public: bool = False  # look the flow up among PUBLIC flows (anonymous callers)
    principal: str | None = None  # the run's user id when it is not ``user_id`` (anonymous visitors)
    run_flow_id: str | None = None  # the flow id messages and vertex builds are recorded under
    messages_as: str | None = None  # whose message store keeps the run's messages (default: the run's user)
    flow_name: str | None = None
    data: dict[str, Any] | None = None  # an unsaved graph to run instead of the stored one (editor builds)
    files: list[str] | None = None  # files attached to the chat input
    webhook_payload: str | None = None  # the raw body handed to every Webhook component
    start_component_id: str | None = None
    stop_component_id: str | None = None
    store_messages: bool = True
    #: record vertex builds (the editor's build records, ``GET /monitor/builds``): builds ask for it, as in
    #: the reference; every run of a stored flow records its transactions (``GET /monitor/transactions``)
    log_builds: bool = False
    #: the run's id (observers, the engine's run id); a surface that answers its caller with the id sets it,
    #: else each execution gets a new one
    run_id: str | None = None
    #: the trace context of the request that queued the run (``propagation_headers``), for its worker
    trace_context: dict[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain JSON of the request, a deep copy: a job's request must share nothing with its caller's (an
        in-process job reads it in another thread while the caller's graph data may change; a one-level copy
        here left the Playground's paused agent runs without their approval card)."""
        return dataclasses.asdict(self)

    def to_job_json(self) -> dict[str, Any]:
        """The request as a job's argument: :meth:`to_json` without its deep copy, which the job queue makes
        anyway (every backend copies a job's kwargs through JSON as it enqueues them)."""
        out = {name: getattr(self, name) for name in _REQUEST_FIELDS}
        out["inputs"] = [
            {"value": i.value, "type": i.type, "components": i.components, "session": i.session} for i in self.inputs
        ]
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunRequest:
        values = dict(data)
        values["inputs"] = [RunInput(**item) for item in values.get("inputs") or []]
        return cls(**values)

    @property
    def run_user_id(self) -> str:
        return str(self.principal or self.user_id or "")


#: the request's field names, once (``dataclasses.fields`` on every call cost a recorded run more than its copy)
_REQUEST_FIELDS = tuple(f.name for f in dataclasses.fields(RunRequest))


class FlowNotFound(ApiError):
    """The flow does not exist for this caller (a foreign flow is not found either): 404."""

    def __init__(self, flow: str) -> None:
        super().__init__(404, f"Flow identifier {flow} not found")
        self.flow = flow


@dataclass
class PreparedRun:
    """A request whose flow was found and allowed; ``graph`` is set once :func:`build` validated it."""

    request: RunRequest
    flow: FlowRecord  # as find_flow returns it (``data`` replaced by an unsaved graph, if any)
    graph: Graph | None = None
    #: the component registry snapshot the run uses from build to end (taken once: a bundle
    #: reload while the run goes swaps the holder, never this run's snapshot)
    registry: Registry | None = None

    @property
    def flow_id(self) -> str:
        return self.request.run_flow_id or self.flow.id

    @property
    def name(self) -> str | None:
        return self.request.flow_name or self.flow.name


@dataclass
class Resume:
    """How a paused run goes on: the results it had, and the answer for the paused vertex."""

    results: dict[str, VertexResult]
    inactive: set[str]
    answers: dict[str, dict[str, Any]]  # vertex id -> {request_id, answer, state}
    session_id: str | None = None


@dataclass
class RunOutcome:
    """What :func:`execute` returns: one result per input, the failed one, or the suspension."""

    results: list[RunResult]
    failed: RunResult | None = None
    #: ``{checkpoint_id, vertex_id, request_id, request}`` when the run paused
    suspended: dict[str, Any] | None = None

    @property
    def status(self) -> str:
        if self.suspended is not None:
            return "suspended"
        return self.failed.status if self.failed is not None else "completed"


# --- preparing ---------------------------------------------------------------------------------------
def resolve(req: RunRequest, app: Flask | None = None, *, found: FlowRecord | None = None) -> PreparedRun:
    """Find the flow (owner-scoped; PUBLIC ones for anonymous runs) and ask ``check_run``.

    ``found``: the flow a surface already read through ``find_flow`` in this request (A2A looks its agent
    up before it checks the key), used instead of a second read when it is the request's flow and belongs
    to the request's user; a public run is always looked up through its public grant.
    Raises :class:`FlowNotFound` (404) or whatever ``check_run`` raises (403).
    """
    check_text(req)
    hooks = state(app).host.hooks
    flow: FlowRecord | None
    if (
        found is not None
        and not req.public
        and req.user_id is not None
        and found.id == str(req.flow)
        and str(found.user_id) == str(req.user_id)
    ):
        flow = found
    else:
        flow = hooks.find_flow(
            user_id=None if req.public else req.user_id,
            flow_id_or_name=req.flow,
            public=req.public,
            draft=req.surface in DRAFT_SURFACES,
        )
    if flow is None or not isinstance(flow.data, Mapping):
        raise FlowNotFound(req.flow)
    if req.data is not None and not req.public:
        flow = flow.replace(data=req.data)
    hooks.check_run(user_id=req.user_id, flow=flow, surface=req.surface)
    return PreparedRun(req, flow)


def check_text(req: RunRequest) -> None:
    """422 before anything runs or is stored when a run's text holds a NUL character (PostgreSQL cannot
    store one in text): inputs, sessions, tweaks, files, the webhook payload. Every surface builds a
    :class:`RunRequest`, so this one check covers those whose body is not JSON (webhooks, forms)."""
    for index, item in enumerate(req.inputs):
        if item.value is not None and "\x00" in item.value:
            loc: list[str | int] = ["body", "input_value"] if len(req.inputs) == 1 else ["body", "inputs", index]
            raise validation_error(loc, NUL_MSG, "value_error")
        if item.session and "\x00" in item.session:
            raise validation_error(["body", "session_id"], NUL_MSG, "value_error")
    if req.session_id and "\x00" in req.session_id:
        raise validation_error(["body", "session_id"], NUL_MSG, "value_error")
    if req.webhook_payload and "\x00" in req.webhook_payload:
        raise validation_error(["body"], NUL_MSG, "value_error")
    refuse_nul(req.tweaks or {}, ["body", "tweaks"])
    refuse_nul(req.files or [], ["body", "files"])
    refuse_nul(req.request_vars, ["header"])


def build(prepared: PreparedRun, app: Flask | None = None) -> PreparedRun:
    """Check the tweaks against ``SERVICE_TWEAKS_POLICY``, apply them and validate the graph (422)."""
    req = prepared.request
    data: Mapping[str, Any] = prepared.flow.data or {}  # resolve() refused a flow without a graph
    if req.tweaks:
        try:
            engine_run.check_tweaks(
                data, req.tweaks, state(app).settings.tweaks_policy, [(i.value, i.type or "chat") for i in req.inputs]
            )
        except RunRefused as exc:
            raise tweak_rules.api_error(exc) from None
    if prepared.registry is None:
        prepared.registry = registry(app)
    key = _graph_key(prepared)
    cached = _graphs.get(key) if key is not None else None
    if cached is not None and cached[0] is prepared.registry:
        prepared.graph = cached[1]
    else:
        try:
            prepared.graph = engine_run.build_graph(
                data, prepared.registry, tweaks=_tweaks(data, req, prepared.registry)
            )
        except GraphValidationError as exc:
            raise ValidationFailed(list(exc.errors)) from None
        if key is not None:
            if len(_graphs) >= GRAPH_CACHE_SIZE:
                _graphs.pop(next(iter(_graphs)))  # the oldest entry: flows rarely change, runs repeat
            _graphs[key] = (prepared.registry, prepared.graph)
    check_model_providers(prepared.graph, app)  # the policy may change between runs: asked every time
    check_subflows(prepared.graph, req.run_user_id or None, prepared.registry, app)  # as the top flow, 403
    return prepared


#: built graphs by (flow id, updated_at): a stored flow's graph is built once per version and process
GRAPH_CACHE_SIZE = 256
_graphs: dict[tuple[str, str], tuple[Registry, Graph]] = {}


def _graph_key(prepared: PreparedRun) -> tuple[str, str] | None:
    """The cache key of a run's graph, or None when the run's graph is its own (tweaks, unsaved data, files).

    A flow's every update sets a new ``updated_at`` (the flows plugin's ``apply_changes``), so a key
    names one version of the stored graph in every process; the registry snapshot is checked too (a
    bundle reload builds anew). A built :class:`Graph` is read-only while it runs (the runner keeps
    its state apart and copies each vertex's parameters), so concurrent runs share it.
    """
    req = prepared.request
    if req.tweaks or req.data is not None or req.files or req.webhook_payload is not None:
        return None
    flow_id, updated = prepared.flow.id, prepared.flow.updated_at
    if not flow_id or not updated:
        return None
    return (str(flow_id), str(updated))


def check_model_providers(graph: Graph, app: Flask | None = None) -> None:
    """403 naming the first model provider of ``graph`` the model-provider policy refuses.

    A component class that calls model providers says which with a classmethod
    ``model_providers(params) -> [provider id]``; every ``model_provider_allowed``
    answer is asked and any False refuses the run before anything runs.
    """
    hooks = state(app).host.hooks
    for vertex in graph.vertices.values():
        named = getattr(vertex.cls, "model_providers", None)
        if named is None:
            continue
        for provider_id in named(vertex.params):
            if any(answer is False for answer in hooks.model_provider_allowed(provider_id=provider_id)):
                raise ApiError(
                    403,
                    f"Model provider '{provider_id}' (component '{vertex.display_name}') "
                    "is not allowed by the model-provider policy",
                )


def prepare(req: RunRequest, app: Flask | None = None, *, found: FlowRecord | None = None) -> PreparedRun:
    """:func:`resolve` then :func:`build`: a run ready to execute, stream or hand to a job."""
    return build(resolve(req, app, found=found), app)


def _tweaks(data: Mapping[str, Any], req: RunRequest, reg: Registry) -> dict[str, Any]:
    """The client's tweaks plus the internal ones: chat files, the webhook payload."""
    merged: dict[str, Any] = dict(req.tweaks or {})
    if req.files or req.webhook_payload is not None:
        for node in data.get("nodes") or []:
            if not isinstance(node, Mapping) or not isinstance(node.get("data"), Mapping):
                continue
            key = node["data"].get("type")
            klass = reg.get(key) if isinstance(key, str) else None
            canonical = klass.key if klass is not None else key
            node_id = str(node.get("id") or node["data"].get("id"))
            if req.files and canonical == "ChatInput":
                merged[node_id] = {**(merged.get(node_id) or {}), "files": list(req.files)}
            if req.webhook_payload is not None and canonical == "Webhook":
                merged[node_id] = {**(merged.get(node_id) or {}), "data": req.webhook_payload}
    return merged


# --- running ---------------------------------------------------------------------------------------
failure_text = engine_run.failure_text  # the engine's: every host reports a failed run alike


def execute(
    prepared: PreparedRun,
    *,
    emit: Callable[[RunEvent], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    job_id: str | None = None,
    previous_results: Mapping[str, VertexResult] | None = None,
    resume: Resume | None = None,
    on_result: Callable[[RunResult], None] | None = None,
    app: Flask | None = None,
) -> RunOutcome:
    """Run every input of the prepared request in turn; stop at the first that fails or pauses.

    A run that pauses writes its checkpoint before this returns (``outcome.suspended``);
    ``resume`` continues one (the request then has the paused input only).
    ``on_result``: called with each input's result before its chat messages are stored, so that rows
    it writes on ``core.db.session()`` without committing share the messages' commit (one commit per
    run; the caller commits what is left when there was no message to store).
    """
    if prepared.graph is None:
        build(prepared, app)
    assert prepared.graph is not None
    req = prepared.request
    if req.public and req.principal:
        from core.runs import public

        public.touch(req.principal, app)  # the public-session cleanup job reads it
    run_id = req.run_id or str(uuid.uuid4())
    hooks = state(app).host.hooks
    if not hooks.observing_runs():  # the hot path: no record built when nobody observes runs
        return _run_inputs(prepared, run_id, emit, cancelled, job_id, previous_results, resume, on_result, app)
    started = RunStarted(
        run_id=run_id,
        flow_id=prepared.flow_id,
        flow_name=prepared.name,
        user_id=req.run_user_id,
        owner_id=req.user_id,
        surface=req.surface,
        # the run's session as its messages get it: a resumed one, the input's, the request's, else the flow id
        session_id=(resume.session_id if resume is not None else None)
        or next((item.session for item in req.inputs if item.session), None)
        or req.session_id
        or prepared.flow_id,
        job_id=job_id,
        public=req.public,
        started_at=time.time(),
        request=RequestJson(req),
    )
    observers = hooks.observe_run(run=started)
    watch = Watch.of(observers)
    t0 = time.perf_counter()
    # The observers hear the end once the run returned (its messages stored, a paused input's checkpoint
    # written). Telling them earlier, as the last result was known, let the native traces' commit run in the
    # middle of the run's own writes: a Playground agent run after it never reached its approval card. An
    # observer with the optional ``ending`` hears the same record earlier, as the last input's result is known
    # and *before* its messages are stored: a row it hands to ``core.groupcommit.defer`` (the triggers'
    # execution) is written in the messages' commit, or by the flush below when no message was stored.
    results_to = ending_hook(observers, started, on_result, len(req.inputs), t0)
    try:
        outcome = _run_inputs(
            prepared, run_id, emit, cancelled, job_id, previous_results, resume, results_to, app, watch=watch
        )
    except BaseException as exc:
        status = "cancelled" if isinstance(exc, (GeneratorExit, KeyboardInterrupt)) else "error"
        tell_end(observers, RunEnded(started, status, time.perf_counter() - t0, error="Run failed unexpectedly"))
        raise
    tell_end(observers, _ended(started, outcome, time.perf_counter() - t0))
    groupcommit.flush_pending()
    return outcome


def _ended(started: RunStarted, outcome: RunOutcome, duration: float) -> RunEnded:
    """The ``RunEnded`` record of a run that returned an outcome."""
    return ended_of(started, outcome.results, duration)


def _run_inputs(
    prepared: PreparedRun,
    run_id: str,
    emit: Callable[[RunEvent], None] | None,
    cancelled: Callable[[], bool] | None,
    job_id: str | None,
    previous_results: Mapping[str, VertexResult] | None,
    resume: Resume | None,
    on_result: Callable[[RunResult], None] | None,
    app: Flask | None,
    watch: RunWatch | None = None,
) -> RunOutcome:
    """Run every input of the prepared request in turn (the body of :func:`execute`)."""
    assert prepared.graph is not None
    req = prepared.request
    results: list[RunResult] = []
    for item in req.inputs:
        ports = hook_ports(
            user_id=req.run_user_id,
            flow_id=prepared.flow_id,
            job_id=job_id,
            log_builds=req.log_builds,
            messages_user_id=req.messages_as,
            app=app,
        )
        ctx = make_context(
            user_id=req.run_user_id,
            flow={"id": prepared.flow_id, "name": prepared.name},
            session_id=(resume.session_id if resume is not None else None) or item.session or req.session_id,
            emit=emit,
            cancelled=cancelled,
            request_vars=req.request_vars,
            store_messages=req.store_messages,
            registry=prepared.registry,
            app=app,
            ports=ports,
        )
        ctx.run_id = run_id
        ctx.watch = watch
        if resume is not None:
            ctx.resume = resume.answers
        result = engine_run.execute(
            prepared.graph,
            ctx,
            ports,
            on_result=on_result,
            input_value=item.value,
            input_type=item.type or "chat",
            input_components=item.components or None,
            start_component_id=req.start_component_id,
            stop_component_id=req.stop_component_id,
            previous_results=previous_results,
            registry=prepared.registry,
            resume_from=resume.results if resume is not None else None,
            inactive=resume.inactive if resume is not None else None,
        )
        results.append(result)
        if result.status == "suspended":
            from core.runs import checkpoints

            paused = checkpoints.save(prepared, result, item, job_id=job_id, app=app)
            return RunOutcome(results, suspended=paused)
        if not result.ok:
            return RunOutcome(results, failed=result)
    return RunOutcome(results)


def stream(
    prepared: PreparedRun, *, keep: Callable[[RunEvent], bool] | None = None, job_id: str | None = None
) -> Iterator[Any]:
    """Run in a worker thread (a greenlet under gevent) and yield its events as they come.

    Yields the typed events ``keep`` accepts (all by default), then the :class:`RunOutcome`
    (or the exception that stopped the run unexpectedly). A consumer that stops iterating
    (the client went away) cancels the run at its next vertex. ``job_id`` names the run as
    :func:`execute` records it (a checkpoint written when it pauses carries it).
    """
    app: Flask = current_app._get_current_object()  # type: ignore[attr-defined]

    def work(emit: Callable[[RunEvent], None], cancelled: Callable[[], bool]) -> RunOutcome:
        with app.app_context():
            return execute(prepared, emit=emit, cancelled=cancelled, job_id=job_id, app=app)

    return engine_run.stream(work, keep=keep, label=f"run of flow {prepared.flow.id}")


def suspended_event(outcome: RunOutcome) -> Suspended | None:
    """The ``suspended`` event of a paused outcome (what a job writes as its end event)."""
    if outcome.suspended is None:
        return None
    s = outcome.suspended
    return Suspended(str(s["vertex_id"]), str(s["request_id"]), dict(s["request"]))


def trace_context(app: Flask | None = None) -> dict[str, str] | None:
    """The current request's trace context (``propagation_headers``) for a run started in another thread or
    process (``RunRequest.trace_context``); None when no plugin propagates one, or outside an app."""
    from flask import has_app_context

    if app is None and not has_app_context():
        return None
    hooks = state(app).host.hooks
    return (hooks.propagation_headers() or None) if hooks.propagating() else None
