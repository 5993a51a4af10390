"""The run context: a :class:`core.engine.RunContext` wired to the plugins through hooks.

Variables (``get_variable``), flows for sub-flow runs (``find_flow``) and their
checks (``check_run`` with surface ``"subflow"``, asked by the engine before it builds any
sub-flow, at any depth), message
storage and history (``on_messages``, ``message_history``), stored files (``read_user_file``,
``write_user_file``) and vertex records
(``on_vertex_built``). Only :mod:`core.runs.service` builds contexts; nothing
here imports a plugin.

The engine calls these callbacks from whichever thread runs a vertex: the run's own, the runner's pool
for a layer's I/O-bound vertices, an agent's pool for its tool calls (greenlets under gevent). The hooks
behind them read the app (its database session, its plugin state), so each callback is bound to the app
the context was made for (:func:`app_binder`): on the run's own thread it is called as it is; on any other,
inside an application context of its own, whose teardown returns that thread's database session.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from flask import Flask
from werkzeug.datastructures import Headers

from core import appctx
from core.app import state
from core.contracts import FlowRecord, MessageRecord, VertexRecord
from core.engine import EgressPolicy, Registry, RunContext, RunEvent, VertexFinished
from core.engine.errors import PolicyRefused
from core.engine.hardening import Hardening
from core.engine.results import output_logs
from core.errors import ApiError
from core.hookcalls import Hooks

GLOBAL_VAR_HEADER = "X-SERVICE-GLOBAL-VAR-"


def registry(app: Flask | None = None) -> Registry:
    """The component registry snapshot in force (swapped atomically on bundle reload)."""
    return state(app).components.current


current_registry = registry  # make_context's ``registry`` argument shadows the name


_ENVIRON_PREFIX = "HTTP_" + GLOBAL_VAR_HEADER.upper().replace("-", "_")


def request_variables(headers: Mapping[str, str] | Headers) -> dict[str, str]:
    """``X-SERVICE-GLOBAL-VAR-<NAME>`` headers as ``{NAME: value}`` (names upper-cased)."""
    environ = getattr(headers, "environ", None)
    if isinstance(environ, dict):  # a request's headers: read its WSGI environ without rebuilding every name
        n = len(_ENVIRON_PREFIX)
        return {key[n:].replace("_", "-"): value for key, value in environ.items() if key.startswith(_ENVIRON_PREFIX)}
    prefix = GLOBAL_VAR_HEADER.lower()
    return {key[len(prefix) :].upper(): value for key, value in headers.items() if key.lower().startswith(prefix)}


F = TypeVar("F", bound=Callable[..., Any])


def app_binder(app: Flask) -> Callable[[F], F]:
    """Wrap callbacks so they run with ``app`` from any thread or greenlet (see the module docstring).

    Call it on the run's own thread, inside its application context: that thread is the fast path (its
    app context is already there). On another thread a call gets an application context of its own and
    uses the run thread's database session, one call at a time (a lock): the run's thread waits for its
    pool meanwhile, so the calls see and write what they would have run serially, in the same
    transaction, and a pool thread never holds a second connection (the embedded SQLite database has
    one; a pool thread asking for another would wait for the run thread, which waits for the pool).
    """
    owner = threading.get_ident()  # a greenlet's id under gevent's monkey-patching
    factory = app.extensions.get("service.db")
    session = factory() if factory is not None else None  # the run thread's (created lazily: no connection yet)
    lock = threading.RLock()  # re-entrant: a callback may call another (a history read flushes messages)

    def bind(fn: F) -> F:
        @functools.wraps(fn)
        def bound(*args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == owner and appctx.app_or_none() is app:
                return fn(*args, **kwargs)
            with lock, app.app_context():
                if factory is None or factory.registry.has():
                    return fn(*args, **kwargs)
                factory.registry.set(session)
                try:
                    return fn(*args, **kwargs)
                finally:
                    factory.registry.clear()  # before the teardown, which would close the run thread's session

        return bound  # type: ignore[return-value]

    return bind


_policy_cache: dict[int, tuple[Any, EgressPolicy, Hardening]] = {}


def _policies(settings: Any) -> tuple[EgressPolicy, Hardening]:
    """The egress rules and host hardening of ``settings``, built once per (frozen) settings object.

    Building them for every run cost a ``mkdir`` system call (the config directory) and two objects.
    """
    found = _policy_cache.get(id(settings))
    if found is None or found[0] is not settings:
        egress = EgressPolicy.from_settings(
            settings.ssrf_protection_enabled,
            settings.ssrf_allowed_hosts,
            connector_validation=settings.connector_ssrf_validation_enabled,
            connector_allow_loopback=settings.connector_ssrf_allow_loopback,
        )
        if len(_policy_cache) > 64:  # apps rebuilt by tests: keep the cache small
            _policy_cache.clear()
        found = _policy_cache[id(settings)] = (settings, egress, Hardening.from_settings(settings))
    return found[1], found[2]


def make_context(
    *,
    user_id: str,
    flow: FlowRecord | Mapping[str, Any],
    session_id: str | None = None,
    emit: Callable[[RunEvent], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    request_vars: Mapping[str, str] | None = None,
    job_id: str | None = None,
    store_messages: bool = True,
    log_builds: bool = True,
    log_transactions: bool = True,
    messages_user_id: str | None = None,
    registry: Registry | None = None,
    app: Flask | None = None,
) -> RunContext:
    """A RunContext for ``user_id`` running ``flow`` (the record ``find_flow`` gave, or ``{id, name}`` of an
    unsaved graph).

    ``messages_user_id`` keeps the run's messages (and reads its history) in another user's
    store than the run's principal: a signed-in visitor's public-playground conversation is
    kept for the visitor while the run itself acts as an anonymous principal.
    """
    keeper = messages_user_id or user_id
    record_vertices = log_builds or log_transactions  # a context without a flow id records nothing
    if app is None:
        app = appctx.current()
    bound = app_binder(app)  # on the run's thread, in its app context: make_context is called there
    svc = state(app)
    hooks = svc.host.hooks
    settings = svc.settings
    egress, hardening = _policies(settings)
    if isinstance(flow, FlowRecord):
        flow_id, flow_name = flow.id or None, flow.name
    else:
        flow_id, flow_name = (str(flow.get("id")) if flow.get("id") else None), flow.get("name")

    def resolve_variable(name: str, _field: str) -> str | None:
        return hooks.get_variable(user_id=user_id, name=name)

    def load_flow(id_or_name: str) -> dict[str, Any] | None:
        found = hooks.find_flow(user_id=user_id, flow_id_or_name=id_or_name, public=False)
        return None if found is None else found.as_dict()  # the engine reads the flow's JSON

    def check_flow(found: Mapping[str, Any]) -> None:
        # the checks of the top flow (core.runs.service.resolve), for every graph the engine loads
        try:
            hooks.check_run(user_id=user_id or None, flow=FlowRecord.from_dict(found), surface="subflow")
        except ApiError as exc:
            raise PolicyRefused(f"Sub-flow '{found.get('name') or found.get('id')}' cannot run: {exc.detail}") from None

    def store_message(message: dict[str, Any]) -> dict[str, Any]:
        hooks.on_messages(user_id=keeper, messages=[MessageRecord.from_dict(message)])
        return message

    def get_messages(session: str | None, flow_ref: str | None, n: int, order: str) -> list[dict[str, Any]]:
        found = hooks.message_history(user_id=keeper, flow_id=flow_ref or flow_id, session_id=session or "", limit=n)
        history = [m.as_dict() for m in found or ()]
        return history if order.upper() == "ASC" else list(reversed(history))

    def mcp_server(name: str) -> dict[str, Any] | None:
        config = hooks.mcp_server_config(user_id=user_id, name=name)
        return None if config is None else config.as_dict()

    def read_file(ref: str) -> bytes:
        content = hooks.read_user_file(user_id=user_id, ref=ref)
        if content is None:
            raise FileNotFoundError(f"File not found: {ref}")
        return content

    def write_file(name: str, content: bytes, append: bool) -> dict[str, Any]:
        stored = hooks.write_user_file(user_id=user_id, name=name, content=content, append=append)
        if stored is None:
            raise OSError("Saving files is not available here (no file storage installed)")
        return stored.as_dict()

    def emit_and_record(event: RunEvent) -> None:
        if record_vertices and isinstance(event, VertexFinished):
            if not log_builds and event.result is not None:
                _record_transaction(hooks, user_id, flow_id, job_id, event)  # no end_vertex payload needed
            else:
                _record_vertex(hooks, user_id, flow_id, job_id, event.payload(), build_record=log_builds)
        if emit is not None:
            emit(event)

    return RunContext(
        user_id=user_id,
        flow_id=flow_id,
        flow_name=flow_name,
        session_id=session_id or flow_id,
        resolve_variable=bound(resolve_variable),
        request_variables=dict(request_vars or {}),
        load_flow=bound(load_flow),
        check_flow=bound(check_flow),
        emit=bound(emit_and_record) if (emit is not None or record_vertices) else None,
        store_message=bound(store_message) if store_messages else None,
        get_messages=bound(get_messages),
        cancelled=cancelled,
        time_limit=float(settings.run_time_limit_seconds) if settings.run_time_limit_seconds else None,
        egress=egress,
        hardening=hardening,
        registry=registry if registry is not None else current_registry(app),
        mcp_server=bound(mcp_server),
        read_file=bound(read_file),
        write_file=bound(write_file),
        provider_allowed=bound(
            lambda provider_id: not any(a is False for a in hooks.model_provider_allowed(provider_id=provider_id))
        ),
        shared=svc.shared,
        bind_callback=bound,
    )


def _record_vertex(
    hooks: Hooks,
    user_id: str,
    flow_id: str | None,
    job_id: str | None,
    data: dict[str, Any],
    *,
    build_record: bool = True,
) -> None:
    build = data.get("build_data") or {}
    outputs = (build.get("data") or {}).get("outputs") or {}
    error = None
    if not build.get("valid", True):
        error = next(
            (
                str(o.get("message", {}).get("errorMessage", ""))
                for o in outputs.values()
                if isinstance(o, dict) and o.get("type") == "error"
            ),
            "failed",
        )
    _send_record(
        hooks,
        user_id,
        flow_id,
        job_id,
        vertex_id=build.get("id"),
        valid=bool(build.get("valid", True)),
        outputs=outputs,
        error=error,
        target_id=(build.get("next_vertices_ids") or [None])[0],
        build=build_record,
        data=build.get("data") or {},
        artifacts=(build.get("data") or {}).get("artifacts") or {},
        params=build.get("params"),
    )


def _record_transaction(
    hooks: Hooks, user_id: str, flow_id: str | None, job_id: str | None, event: VertexFinished
) -> None:
    """The transaction record of a vertex straight from its result: what :func:`_record_vertex` writes with
    ``build_record=False``, without building the ``end_vertex`` payload (2% of a simple run's instructions)."""
    vr = event.result
    _send_record(
        hooks,
        user_id,
        flow_id,
        job_id,
        vertex_id=vr.id,
        valid=bool(vr.valid),
        outputs=output_logs(vr),
        error=None if vr.valid else str(vr.error),
        target_id=event.next_ids[0] if event.next_ids else None,
        build=False,
    )


def _send_record(hooks: Hooks, user_id: str, flow_id: str | None, job_id: str | None, **fields: Any) -> None:
    """Hand one vertex's record to ``on_vertex_built`` (nothing for a run of an unsaved graph)."""
    if flow_id is None:
        return
    hooks.on_vertex_built(record=VertexRecord(user_id=user_id, flow_id=flow_id, job_id=job_id, **fields))
