"""The run context: the engine's run ports (:mod:`core.engine.ports`) over the plugins' hooks.

Variables (``get_variable``), flows for sub-flow runs (``find_flow``) and their
checks (``check_run`` with surface ``"subflow"``, asked by the engine before it builds any
sub-flow, at any depth), message
storage and history (``on_messages``, ``message_history``), stored files (``read_user_file``,
``write_user_file``) and vertex records
(``on_vertex_built``): :class:`HookPorts` implements each port, :func:`hook_ports` binds them to the
app, and the engine's :func:`core.engine.execution.context_for` makes the context. Only
:mod:`core.runs.service` runs flows with them; nothing here imports a plugin.

The engine calls these callbacks from whichever thread runs a vertex: the run's own, the runner's pool
for a layer's I/O-bound vertices, an agent's pool for its tool calls (greenlets under gevent). The hooks
behind them read the app (its database session, its plugin state), so each callback is bound to the app
the context was made for (:func:`app_binder`): on the run's own thread it is called as it is; on any other,
inside an application context of its own, whose teardown returns that thread's database session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from flask import Flask
from werkzeug.datastructures import Headers

from core import appctx
from core.appstate import state
from core.contracts import FlowRecord, MessageRecord, VertexRecord
from core.engine import EgressPolicy, Registry, RunContext, RunEvent, VertexFinished
from core.engine.errors import PolicyRefused
from core.engine.execution import context_for
from core.engine.host_access import Hardening
from core.engine.ports import RunPorts, transaction_record, vertex_record
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

    get_ident = threading.get_ident
    app_or_none = appctx.app_or_none

    def bind(fn: F) -> F:
        # a bare closure, not functools.wraps: a run binds about ten callbacks, and copying their
        # metadata was 1-2% of a simple run's instructions; nothing reads a callback's __name__
        def bound(*args: Any, **kwargs: Any) -> Any:
            if get_ident() == owner and app_or_none() is app:
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


class HookPorts:
    """The run ports (:mod:`core.engine.ports`) over the plugins' hooks, for one run user.

    ``keeper`` owns the message store the run writes and reads (a signed-in visitor's public-playground
    conversation is kept for the visitor while the run acts as an anonymous principal); vertex records
    name ``flow_id`` and ``job_id``.
    """

    def __init__(
        self,
        hooks: Hooks,
        user_id: str,
        *,
        keeper: str | None = None,
        flow_id: str | None = None,
        job_id: str | None = None,
        builds: bool = True,
    ) -> None:
        self.hooks = hooks
        self.user_id = user_id
        self.keeper = keeper or user_id
        self.flow_id = flow_id
        self.job_id = job_id
        self.builds = builds

    # FlowLookup
    def load_flow(self, id_or_name: str) -> dict[str, Any] | None:
        found = self.hooks.find_flow(user_id=self.user_id, flow_id_or_name=id_or_name, public=False)
        return None if found is None else found.as_dict()  # the engine reads the flow's JSON

    def check_flow(self, found: Mapping[str, Any]) -> None:
        # the checks of the top flow (core.runs.service.resolve), for every graph the engine loads
        try:
            self.hooks.check_run(user_id=self.user_id or None, flow=FlowRecord.from_dict(found), surface="subflow")
        except ApiError as exc:
            raise PolicyRefused(f"Sub-flow '{found.get('name') or found.get('id')}' cannot run: {exc.detail}") from None

    # Variables
    def variable(self, name: str, field: str) -> str | None:
        return self.hooks.get_variable(user_id=self.user_id, name=name)

    # MessageStore
    def store_messages(self, messages: list[dict[str, Any]]) -> None:
        self.hooks.on_messages(user_id=self.keeper, messages=[MessageRecord.from_dict(m) for m in messages])

    def history(self, flow_id: str | None, session_id: str, limit: int) -> list[dict[str, Any]]:
        found = self.hooks.message_history(user_id=self.keeper, flow_id=flow_id, session_id=session_id, limit=limit)
        return [m.as_dict() for m in found or ()]

    # FileStore
    def read_file(self, ref: str) -> bytes:
        content = self.hooks.read_user_file(user_id=self.user_id, ref=ref)
        if content is None:
            raise FileNotFoundError(f"File not found: {ref}")
        return content

    def write_file(self, name: str, content: bytes, append: bool) -> dict[str, Any]:
        stored = self.hooks.write_user_file(user_id=self.user_id, name=name, content=content, append=append)
        if stored is None:
            raise OSError("Saving files is not available here (no file storage installed)")
        return stored.as_dict()

    # RunRecorder
    def record_vertex(self, record: dict[str, Any]) -> None:
        _send_record(self.hooks, self.user_id, self.flow_id, self.job_id, **record)

    # the rest of the context
    def mcp_server(self, name: str) -> dict[str, Any] | None:
        config = self.hooks.mcp_server_config(user_id=self.user_id, name=name)
        return None if config is None else config.as_dict()

    def provider_allowed(self, provider_id: str) -> bool:
        return not any(answer is False for answer in self.hooks.model_provider_allowed(provider_id=provider_id))


def hook_ports(
    *,
    user_id: str,
    flow_id: str | None = None,
    job_id: str | None = None,
    log_builds: bool = True,
    log_transactions: bool = True,
    messages_user_id: str | None = None,
    app: Flask | None = None,
) -> RunPorts:
    """The web service's run ports for ``user_id``: hooks and the database, each bound to the app (call it on
    the run's own thread, inside its application context)."""
    if app is None:
        app = appctx.current()
    svc = state(app)
    settings = svc.settings
    egress, hardening = _policies(settings)
    hooks = HookPorts(
        svc.host.hooks, user_id, keeper=messages_user_id, flow_id=flow_id, job_id=job_id, builds=log_builds
    )
    record = flow_id is not None and (log_builds or log_transactions)  # a run without a flow id records nothing
    return RunPorts(
        flows=hooks,
        variables=hooks,
        messages=hooks,
        files=hooks,
        recorder=hooks if record else None,
        mcp_server=hooks.mcp_server,
        provider_allowed=hooks.provider_allowed,
        egress=egress,
        hardening=hardening,
        time_limit=float(settings.run_time_limit_seconds) if settings.run_time_limit_seconds else None,
        shared=svc.shared,
        bind=app_binder(app),
    )


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
    ports: RunPorts | None = None,
) -> RunContext:
    """A RunContext for ``user_id`` running ``flow`` (the record ``find_flow`` gave, or ``{id, name}`` of an
    unsaved graph).

    ``messages_user_id`` keeps the run's messages (and reads its history) in another user's
    store than the run's principal: a signed-in visitor's public-playground conversation is
    kept for the visitor while the run itself acts as an anonymous principal. ``ports``: the
    :func:`hook_ports` already made for this run (made here otherwise).
    """
    if app is None:
        app = appctx.current()
    if isinstance(flow, FlowRecord):
        flow_id, flow_name = flow.id or None, flow.name
    else:
        flow_id, flow_name = (str(flow.get("id")) if flow.get("id") else None), flow.get("name")
    if ports is None:
        ports = hook_ports(
            user_id=user_id,
            flow_id=flow_id,
            job_id=job_id,
            log_builds=log_builds,
            log_transactions=log_transactions,
            messages_user_id=messages_user_id,
            app=app,
        )
    return context_for(
        ports,
        user_id=user_id,
        flow_id=flow_id,
        flow_name=flow_name,
        session_id=session_id,
        emit=emit,
        cancelled=cancelled,
        request_vars=request_vars,
        registry=registry if registry is not None else current_registry(app),
        store_messages=store_messages,
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
    """Hand the record of one ``end_vertex`` payload to ``on_vertex_built``."""
    _send_record(hooks, user_id, flow_id, job_id, **vertex_record(data, build_record=build_record))


def _record_transaction(
    hooks: Hooks, user_id: str, flow_id: str | None, job_id: str | None, event: VertexFinished
) -> None:
    """The transaction record of a vertex straight from its result (what :func:`_record_vertex` writes with
    ``build_record=False``, without building the ``end_vertex`` payload)."""
    _send_record(hooks, user_id, flow_id, job_id, **transaction_record(event))


def _send_record(hooks: Hooks, user_id: str, flow_id: str | None, job_id: str | None, **fields: Any) -> None:
    """Hand one vertex's record to ``on_vertex_built`` (nothing for a run of an unsaved graph)."""
    if flow_id is None:
        return
    hooks.on_vertex_built(record=VertexRecord(user_id=user_id, flow_id=flow_id, job_id=job_id, **fields))
