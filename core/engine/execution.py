"""The run path every host shares: request checks, graph, context from ports, execute or stream, failure text.

No web framework, database or job queue here (an import-linter contract says so): the web service
(:mod:`core.runs.service`) and the executor (``service_exec``) are two adapters over these functions::

    check_tweaks(flow["data"], tweaks, policy, inputs=[(input_value, "chat")])   # SERVICE_TWEAKS_POLICY
    graph = build_graph(flow["data"], registry, tweaks=tweaks)                  # GraphValidationError: 422
    ctx = context_for(ports, flow_id=..., flow_name=..., emit=..., registry=registry)
    result = execute(graph, ctx, ports, input_value="hi")                       # messages stored once, at the end
    items = stream(lambda emit, cancelled: ..., keep=...)                       # events, then the result
    failure_text(result)                                                        # what a failed run reports

A refused request raises :class:`~core.engine.errors.RunRefused` (``status``, ``detail``): each host
answers it in its own way (``{"detail": ...}`` with that status, over HTTP).
"""

from __future__ import annotations

import contextvars
import logging
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from core.engine import tweaks as tweak_rules
from core.engine.events import RunEvent, VertexFinished
from core.engine.frozen import FROZEN_RESULTS
from core.engine.graph import Graph
from core.engine.ports import MessageStore, RunPorts, transaction_record, vertex_record
from core.engine.registry import Registry
from core.engine.results import RunResult
from core.engine.run_context import RunContext
from core.engine.runner import run_graph

log = logging.getLogger(__name__)

__all__ = ["build_graph", "check_tweaks", "context_for", "execute", "failure_text", "stream"]

#: ``work(emit, cancelled) -> result``: one run, as :func:`stream` starts it on its thread
Work = Callable[[Callable[[RunEvent], None], Callable[[], bool]], Any]


def check_tweaks(
    data: Mapping[str, Any],
    tweaks: Mapping[str, Any] | None,
    policy: str,
    inputs: Iterable[tuple[str | None, str]] = (),
) -> None:
    """``SERVICE_TWEAKS_POLICY`` (:class:`~core.engine.tweaks.TweaksRefused`, 422), then the input/tweak conflict
    of each ``(input value, input type)`` (:class:`~core.engine.tweaks.InputConflict`, 400)."""
    if not tweaks:
        return
    tweak_rules.check_tweaks(data, tweaks, policy)
    for value, kind in inputs:
        tweak_rules.check_input_conflict(data, tweaks, value, kind or "chat")


def build_graph(data: Mapping[str, Any], registry: Registry, *, tweaks: Mapping[str, Any] | None = None) -> Graph:
    """The flow's graph with ``tweaks`` applied (:class:`~core.engine.errors.GraphValidationError` when invalid)."""
    return Graph.build(data, registry, tweaks=dict(tweaks) if tweaks else None)


def context_for(
    ports: RunPorts,
    *,
    user_id: str | None = None,
    flow_id: str | None = None,
    flow_name: str | None = None,
    session_id: str | None = None,
    emit: Callable[[RunEvent], None] | None = None,
    cancelled: Callable[[], bool] | None = None,
    request_vars: Mapping[str, str] | None = None,
    registry: Registry | None = None,
    store_messages: bool = True,
) -> RunContext:
    """A :class:`RunContext` whose callbacks are ``ports`` (each bound with ``ports.bind`` when set).

    Messages go to ``ports.messages`` one call per message here; :func:`execute` batches them per run.
    Vertex records go to ``ports.recorder`` (``build`` records or transactions, see :class:`RunRecorder`).
    """
    bind = ports.bind or _unbound
    flows, variables, files, messages, recorder = (
        ports.flows,
        ports.variables,
        ports.files,
        ports.messages,
        ports.recorder,
    )
    get_messages = None
    store_message = None
    if messages is not None:
        history = messages.history
        default_flow = flow_id

        def read_history(session: str | None, flow_ref: str | None, n: int, order: str) -> list[dict[str, Any]]:
            found = history(flow_ref or default_flow, session or "", n) or []
            return found if order.upper() == "ASC" else list(reversed(found))

        get_messages = bind(read_history)
        if store_messages:
            store_many = messages.store_messages

            def store_one(message: dict[str, Any]) -> dict[str, Any]:
                store_many([message])
                return message

            store_message = bind(store_one)
    send = emit
    if recorder is not None:
        record = recorder.record_vertex
        builds = recorder.builds

        def emit_and_record(event: RunEvent) -> None:
            if isinstance(event, VertexFinished):
                if not builds and event.result is not None:
                    record(transaction_record(event))  # no end_vertex payload needed
                else:
                    record(vertex_record(event.payload(), build_record=builds))
            if emit is not None:
                emit(event)

        send = bind(emit_and_record)
    elif emit is not None:
        send = bind(emit)
    return RunContext(
        user_id=user_id,
        flow_id=flow_id,
        flow_name=flow_name,
        session_id=session_id or flow_id,
        resolve_variable=bind(variables.variable) if variables is not None else None,
        request_variables=dict(request_vars or {}),
        load_flow=bind(flows.load_flow) if flows is not None else None,
        check_flow=bind(flows.check_flow) if flows is not None else None,
        emit=send,
        store_message=store_message,
        get_messages=get_messages,
        cancelled=cancelled,
        time_limit=ports.time_limit,
        egress=ports.egress,
        hardening=ports.hardening,
        registry=registry,
        mcp_server=bind(ports.mcp_server) if ports.mcp_server is not None else None,
        read_file=bind(files.read_file) if files is not None else None,
        write_file=bind(files.write_file) if files is not None else None,
        provider_allowed=bind(ports.provider_allowed) if ports.provider_allowed is not None else None,
        shared=ports.shared,
        bind_callback=ports.bind,
        frozen_cache=FROZEN_RESULTS,
    )


def _unbound(fn: Any) -> Any:
    return fn


def batch_messages(ctx: RunContext, store: MessageStore | None) -> Callable[[], None]:
    """Keep a run's chat messages and hand them to ``store`` in one call (one transaction) instead of one per
    message; returns the flush, to call when the run ends (also when it fails, is cancelled or pauses).

    A history read during the run (Message History) flushes what is pending first, so it sees them.
    ``add_message`` events are not delayed. Nothing changes when the context stores no messages.
    """
    if ctx.store_message is None or store is None:
        return lambda: None
    pending: list[dict[str, Any]] = []
    store_many = store.store_messages

    def flush() -> None:
        if pending:
            batch = list(pending)
            pending.clear()
            store_many(batch)

    read = ctx.get_messages

    def get_messages(*args: Any) -> list[dict[str, Any]]:
        flush()
        return read(*args) if read is not None else []

    ctx.store_message = pending.append
    # the history read may come from a pool thread (a layer's I/O-bound vertices): bound too
    ctx.get_messages = ctx.bind_callback(get_messages) if ctx.bind_callback is not None else get_messages
    return flush


def execute(
    graph: Graph,
    ctx: RunContext,
    ports: RunPorts,
    *,
    on_result: Callable[[RunResult], None] | None = None,
    **run: Any,
) -> RunResult:
    """Run ``graph`` in ``ctx`` (``run``: :func:`~core.engine.runner.run_graph`'s options); never raises for
    component failures. The run's messages reach ``ports.messages`` in one call when it ends, after
    ``on_result(result)`` (rows it writes without committing share the messages' transaction)."""
    flush = batch_messages(ctx, ports.messages)
    try:
        result = run_graph(graph, ctx, **run)
        if on_result is not None:
            on_result(result)
    finally:
        flush()
    return result


def stream(work: Work, *, keep: Callable[[RunEvent], bool] | None = None, label: str = "run") -> Iterator[Any]:
    """Run ``work(emit, cancelled)`` on a thread (a greenlet under gevent) and yield its events as they come.

    Yields the events ``keep`` accepts (all by default), then what ``work`` returned (or the exception that
    stopped it unexpectedly, logged with ``label``). A consumer that stops iterating (the client went away)
    cancels the run at its next vertex. The thread starts now, not at the first ``next()``.
    """
    items: queue.SimpleQueue[Any] = queue.SimpleQueue()
    stop = threading.Event()
    done = object()

    def emit(event: RunEvent) -> None:
        if keep is None or keep(event):
            items.put(event)

    def target() -> None:
        try:
            items.put(work(emit, stop.is_set))
        except Exception as exc:  # handed to the consumer, which reports it in its wire format
            log.exception("streamed %s failed", label)
            items.put(exc)
        finally:
            items.put(done)

    # the caller's context variables (a trace's current span) go with the run into its thread
    threading.Thread(target=contextvars.copy_context().run, args=(target,), name="run-stream", daemon=True).start()

    def generate() -> Iterator[Any]:
        try:
            while True:
                item = items.get()
                if item is done:
                    return
                yield item
        finally:
            stop.set()

    return generate()


def failure_text(result: RunResult) -> str:
    """What a failed run reports: the failing component and its error, never a traceback."""
    error = result.error or {}
    if result.status == "timed_out":
        return "Run time limit exceeded"
    if result.status == "cancelled":
        return "Run cancelled"
    name = error.get("display_name") or "component"
    vid = error.get("vertex_id")
    where = f"{name} ({vid})" if vid else name
    return f"Error running component {where}: {error.get('message') or 'failed'}"
