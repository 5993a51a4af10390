"""Everything a run needs from its caller, bundled in one :class:`RunContext`.

The engine never touches the database, the request or the job queue: each
capability is a callback its host supplies, usually made from the host's run ports
(:mod:`core.engine.ports`) by :func:`core.engine.execution.context_for`.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from core.engine.egress import EgressPolicy
from core.engine.errors import RunCancelled, RunTimeout
from core.engine.events import RunEvent
from core.engine.host_access import Hardening
from core.engine.observe import RunWatch

__all__ = ["RunContext"]

#: ``resolve_variable(name, field_name) -> value or None`` (None: not found)
VariableResolver = Callable[[str, str], "str | None"]
#: ``load_flow(id_or_name) -> {"id", "name", "data"} or None``
FlowLoader = Callable[[str], "dict[str, Any] | None"]
#: ``check_flow({"id", "name", "data"})``: raise (a :class:`core.engine.errors.PolicyRefused`) to refuse a graph
FlowChecker = Callable[[Mapping[str, Any]], None]
#: ``get_messages(session_id, flow_id, n, order) -> [message dict]``; order "ASC" or "DESC"
MessageGetter = Callable[["str | None", "str | None", int, str], "list[dict[str, Any]]"]


@dataclass
class RunContext:
    """Caller-supplied identity, callbacks and limits for one run.

    - ``emit(event)`` receives the typed run events (:mod:`core.engine.events`).
      Calls are serialised under a lock, so it may be called from worker threads.
    - ``store_message(message_dict)`` persists a chat message; it may return the
      stored dict (its ``id`` then replaces the engine's).
    - ``resolve_variable(name, field)`` resolves ``load_from_db`` fields; values in
      ``request_variables`` (from ``X-SERVICE-GLOBAL-VAR-*`` headers) win.
    - ``cancelled()`` is polled between vertices; ``time_limit`` (seconds) or
      ``deadline`` (``time.monotonic()`` value) bounds the run.
    - ``frozen_cache`` keeps results of frozen vertices across runs (any mapping).
    - ``registry`` is the snapshot the run uses (set by :func:`run_flow`; sub-flows reuse it).
    - ``hardening`` says what components may touch on this host (local paths,
      file databases, code execution and its sandbox limits).
    - ``read_file(path)`` lets file components read a user's stored file; without
      it they refuse server paths.
    - ``write_file(name, content, append)`` keeps bytes as a stored file of the run's user
      (``{id, name, path, size}``); without it, Write File refuses.
    - ``resume`` maps a vertex id to the answer of the request it suspended the
      run with (``{"request_id", "answer", "state"}``): set when a run resumes
      from a checkpoint (:meth:`core.engine.Component.resumed` reads it).
    - every callback may be called from any thread or greenlet that runs a vertex (the runner's pool,
      an agent's tool calls): the caller makes them work there (:mod:`core.runs.hook_ports` binds each to
      its app), so a component never needs the caller's thread or web context.
    - ``bind_callback(fn)`` wraps one more callback the same way (set by the caller that bound the
      others; None: callbacks are used as they are).
    - ``shared`` is the deployment's shared store (``core.shared.SharedState``; None when the engine
      runs alone): components that remember something across runs and processes use it.
    - ``check_flow(flow)`` is asked before :func:`core.engine.run_flow` builds a graph (every sub-flow,
      at every depth: Run Flow, Sub Flow, flows as tools): the same checks the top flow had before
      the run (the catalog policy, the code-execution switches); it raises to refuse. Children inherit it.
    - ``mcp_server(name)`` gives the run user's stored MCP server config (secrets in clear, for
      the connection only) or None; it raises when a deployment policy refuses the server.
    """

    user_id: str | None = None
    flow_id: str | None = None
    flow_name: str | None = None
    session_id: str | None = None
    run_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    resolve_variable: VariableResolver | None = None
    request_variables: dict[str, str] = field(default_factory=dict)
    load_flow: FlowLoader | None = None
    check_flow: FlowChecker | None = None
    emit: Callable[[RunEvent], None] | None = None
    store_message: Callable[[dict[str, Any]], Any] | None = None
    get_messages: MessageGetter | None = None
    cancelled: Callable[[], bool] | None = None
    time_limit: float | None = None
    deadline: float | None = None
    egress: EgressPolicy = field(default_factory=EgressPolicy)
    hardening: Hardening = field(default_factory=Hardening)
    frozen_cache: MutableMapping[str, Any] | None = None
    read_file: Callable[[str], bytes] | None = None
    write_file: Callable[[str, bytes, bool], dict[str, Any]] | None = None
    registry: Any = None
    resume: dict[str, dict[str, Any]] = field(default_factory=dict)
    mcp_server: Callable[[str], dict[str, Any] | None] | None = None
    #: ``provider_allowed(provider_id) -> bool``: the model-provider policy (None: all allowed)
    provider_allowed: Callable[[str], bool] | None = None
    #: the run's observers' watch (:mod:`core.engine.observe`): components and model calls; None: nobody asked
    watch: RunWatch | None = None
    shared: Any = None
    bind_callback: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None
    max_subflow_depth: int = 5
    depth: int = 0
    flow_stack: tuple[str, ...] = ()
    _emit_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # -- helpers used by the engine and components ---------------------------
    def start_clock(self) -> None:
        if self.deadline is None and self.time_limit is not None:
            self.deadline = time.monotonic() + self.time_limit

    def remaining_time(self) -> float | None:
        if self.deadline is None:
            return None
        return self.deadline - time.monotonic()

    def check(self) -> None:
        """Raise :class:`RunCancelled` or :class:`RunTimeout` when the run must stop."""
        if self.cancelled is not None and self.cancelled():
            raise RunCancelled("Run cancelled")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RunTimeout("Run time limit exceeded")

    def send_event(self, event: RunEvent) -> None:
        if self.emit is None:
            return
        with self._emit_lock:
            self.emit(event)

    def variable(self, name: str, field_name: str = "") -> str | None:
        """A global variable's value: request variables first, then the resolver."""
        if name in self.request_variables:
            return self.request_variables[name]
        upper = {k.upper(): v for k, v in self.request_variables.items()}
        if name.upper() in upper:
            return upper[name.upper()]
        if self.resolve_variable is None:
            return None
        return self.resolve_variable(name, field_name)

    def child(self, *, flow_id: str | None, flow_name: str | None, session_id: str | None) -> RunContext:
        """A context for a sub-flow run: same user, callbacks and deadline; one level deeper."""
        return RunContext(
            user_id=self.user_id,
            flow_id=flow_id,
            flow_name=flow_name,
            session_id=session_id or self.session_id,
            resolve_variable=self.resolve_variable,
            request_variables=self.request_variables,
            load_flow=self.load_flow,
            check_flow=self.check_flow,
            emit=None,
            store_message=self.store_message,
            get_messages=self.get_messages,
            cancelled=self.cancelled,
            deadline=self.deadline,
            egress=self.egress,
            hardening=self.hardening,
            frozen_cache=self.frozen_cache,
            read_file=self.read_file,
            write_file=self.write_file,
            registry=self.registry,
            mcp_server=self.mcp_server,
            provider_allowed=self.provider_allowed,
            watch=self.watch,  # a sub-flow's components and model calls belong to the run too
            shared=self.shared,
            bind_callback=self.bind_callback,
            max_subflow_depth=self.max_subflow_depth,
            depth=self.depth + 1,
            flow_stack=(*self.flow_stack, str(flow_id)),
        )
