"""Execute a :class:`Graph`.

Scheduling: vertices run in topological layers, **sequentially** by default:
components are CPU-light, and a thread hop costs more than most of them take.
Inside a layer, vertices whose class sets ``io_bound = True`` (HTTP, sub-flows)
run together on a small ``ThreadPoolExecutor`` when there are two or more of
them; under gevent monkey-patching those threads are greenlets, so the same
code serves both worlds. Each pooled vertex runs in a copy of the caller's
``contextvars`` context (what the caller set there travels with it); the run
context's callbacks work from any thread (:mod:`core.runs.hook_ports` binds them to
their app), so nothing a vertex does needs the caller's thread. Events are
emitted under a lock.

Between vertices the run checks ``context.cancelled()`` and its deadline.
A failing vertex stops the run: its ``end_vertex`` says ``valid: false``, an
``error`` event follows and no ``end``. No traceback reaches the payloads.

A component may *suspend* the run (:class:`SuspendRun`): the run stops with
status ``suspended``, a ``suspended`` event, and the results so far; a later
run of the same graph with ``resume_from`` (those results) and the answer in
``RunContext.resume`` builds the suspended vertex again and goes on.
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.engine.component import Component, VertexInfo
from core.engine.errors import ComponentError, PolicyRefused, RunCancelled, RunTimeout, SuspendRun
from core.engine.events import (
    BuildStarted,
    RunFailed,
    RunFinished,
    Suspended,
    VertexFinished,
    VertexStarted,
    VerticesSorted,
)
from core.engine.graph import Graph, Vertex
from core.engine.registry import Registry
from core.engine.results import RunResult, VertexResult, end_vertex_payload, format_elapsed_time
from core.engine.run_context import RunContext
from core.engine.tools import TOOL_OUTPUT, component_toolkit
from core.engine.types import Message, jsonable, new_id

__all__ = ["run_flow", "run_graph"]

logger = logging.getLogger(__name__)
_MAX_LOOP_ITEMS = 100_000


class _VertexFailed(Exception):
    def __init__(self, vr: VertexResult):
        self.vr = vr
        super().__init__(vr.error)


def _offers_tools(cls: type[Component]) -> bool:
    """A component class with tools of its own (it overrides :meth:`Component.as_tools`): in tool mode,
    its ``component_as_tool`` output is those tools rather than one tool per output."""
    return cls.as_tools is not Component.as_tools


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    if isinstance(exc, (ValueError, ComponentError, TypeError, KeyError, LookupError)) and text:
        return text.strip("'\"") if isinstance(exc, KeyError) else text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _Run:
    def __init__(self, graph: Graph, context: RunContext, registry: Registry | None):
        self.graph = graph
        self.ctx = context
        self.registry = registry
        self.result = RunResult(context.run_id, context.session_id, context.flow_id)
        self.result.graph = graph
        self.res = self.result.results
        self.inactive: set[str] = set()
        self.overrides: dict[str, dict[str, Any]] = {}
        self.to_run: set[str] = set()
        self.emit = context.emit is not None

    # -- parameters ---------------------------------------------------------------------
    def _params(self, v: Vertex) -> tuple[dict[str, Any], dict[str, Any]]:
        # copies: a built graph is shared by concurrent runs (core.runs caches it per flow version),
        # so a component changing a list or dict parameter in place must not change the graph's
        params = {k: (value.copy() if type(value) in (list, dict) else value) for k, value in v.params.items()}
        extra = {k: (value.copy() if type(value) in (list, dict) else value) for k, value in v.extra_params.items()}
        over = self.overrides.get(v.id)
        if over:
            params.update(over)
        for field, var in v.db_fields.items():
            if over and field in over:
                continue
            value = self.ctx.variable(var, field)
            if value is None:
                raise ComponentError(f"{field}: variable '{var}' not found.")
            if field in params:
                params[field] = value
            else:
                extra[field] = value
        lists: dict[str, list[Any]] = {}
        for e in v.in_edges:
            if e.loop_back:
                continue
            src = self.res.get(e.source)
            if src is None or e.source in self.inactive or e.source_output in src.stopped_outputs:
                continue
            if e.source_output not in src.outputs:
                continue
            value = src.outputs[e.source_output]
            inp = v.cls.input_map().get(e.target_field)
            if inp is not None and inp.is_list:
                lists.setdefault(e.target_field, []).extend(value if isinstance(value, list) else [value])
            elif inp is not None:
                params[e.target_field] = value
            else:
                extra[e.target_field] = value
        params.update(lists)
        input_map = v.cls.input_map()
        for name, value in params.items():
            inp = input_map.get(name)
            if inp is not None:
                try:
                    params[name] = inp.coerce(value)
                except ValueError as exc:
                    raise ComponentError(str(exc)) from None
        return params, extra

    def _outputs_needed(self, v: Vertex, comp: Component) -> list[str]:
        wanted: list[str] = []
        for e in v.out_edges:
            if not e.loop_back and e.source_output not in wanted:
                wanted.append(e.source_output)
        if wanted:
            return wanted
        if v.selected_output and v.selected_output in v.cls.output_map():
            return [v.selected_output]
        active = comp.active_outputs()
        if active is not None:
            return list(active)
        return [o.name for o in v.cls.outputs if not o.allows_loop]

    # -- one vertex ---------------------------------------------------------------------
    def _frozen_key(self, v: Vertex, params: dict[str, Any]) -> str:
        digest = hashlib.sha256(repr(sorted((k, repr(jsonable(p))) for k, p in params.items())).encode()).hexdigest()[
            :16
        ]
        return f"{self.ctx.flow_id}:{v.id}:{digest}"

    def run_vertex(self, vid: str, loop_item: tuple[str, Any] | None = None) -> VertexResult:
        watch = self.ctx.watch
        if watch is None:  # the hot path: nobody watches components
            return self._run_vertex(vid, loop_item)
        v = self.graph.vertices[vid]
        end = watch.component(vid, v.display_name, v.key)
        status, error = "error", None
        try:
            vr = self._run_vertex(vid, loop_item)
            status = "ok"
            return vr
        except SuspendRun:
            status = "paused"
            raise
        except RunCancelled:
            status = "cancelled"
            raise
        except _VertexFailed as failed:
            error = failed.vr.error
            raise
        finally:
            end(status, error)

    def _run_vertex(self, vid: str, loop_item: tuple[str, Any] | None = None) -> VertexResult:
        v = self.graph.vertices[vid]
        vr = VertexResult(vid, v.key, v.display_name)
        if self.emit:
            self.ctx.send_event(VertexStarted(vid, v.display_name, v.key))
        start = time.perf_counter()
        try:
            params, extra = self._params(v)
            cache = self.ctx.frozen_cache if v.frozen else None
            fkey = self._frozen_key(v, params) if cache is not None else None
            if cache is not None and fkey is not None and fkey in cache:
                cached = cache[fkey]
                vr.outputs = dict(cached.outputs)
                vr.stopped_outputs = set(cached.stopped_outputs)
                vr.used_frozen_result = True
            else:
                info = VertexInfo(
                    vid,
                    v.key,
                    v.display_name,
                    any(self.graph.vertices[e.source].key == "ChatInput" for e in v.in_edges),
                )
                comp = v.cls(params, context=self.ctx, vertex=info, extra_params=extra)
                if v.cls.is_loop:
                    self._run_loop(v, comp, vr)
                else:
                    for name in self._outputs_needed(v, comp):
                        out = v.cls.output_map().get(name)
                        if out is None and name == TOOL_OUTPUT and _offers_tools(v.cls):
                            vr.outputs[name] = comp.as_tools()  # its own tools (MCP Tools: the server's)
                        elif out is None and name == TOOL_OUTPUT:
                            vr.outputs[name] = component_toolkit(
                                v.cls,
                                params,
                                context=self.ctx,
                                vertex=info,
                                extra=extra,
                                metadata=v.tools_metadata,
                                fields=v.tool_fields,
                            )
                        elif out is not None:
                            vr.outputs[name] = getattr(comp, out.method)()
                        else:
                            vr.outputs[name] = comp.build_dynamic_output(name)  # type: ignore[attr-defined]
                vr.stopped_outputs = set(comp.stopped_outputs)
                vr.logs = comp.logs
                vr.messages = comp.messages
                vr.status = comp.status
                if cache is not None and fkey is not None:
                    cache[fkey] = vr
        except SuspendRun as pause:
            pause.vertex_id = pause.vertex_id or vid  # the innermost vertex that asked
            raise
        except (RunCancelled, RunTimeout):
            raise
        except _VertexFailed:
            raise
        except Exception as exc:
            if isinstance(exc, PolicyRefused) and self.ctx.depth > 0:
                raise  # a sub-flow refused inside a sub-flow: up to the top run, which fails naming it
            logger.info("vertex %s failed", vid, exc_info=True)
            vr.valid = False
            vr.error = _error_text(exc)
            if not vr.outputs:
                vr.outputs = {name: None for name in (o.name for o in v.cls.outputs[:1])}
        elapsed = time.perf_counter() - start
        vr.timedelta = elapsed
        vr.duration = format_elapsed_time(elapsed)
        self.res[vid] = vr
        if vr.valid and vr.stopped_outputs:
            vr.inactivated = self._propagate_inactive(v, vr)
        if self.emit:
            next_ids = self._next_ids(v)
            graph = self.graph
            self.ctx.send_event(
                VertexFinished(
                    vid,
                    v.display_name,
                    vr.valid,
                    vr.error,
                    build=lambda: end_vertex_payload(vr, graph=graph, next_ids=next_ids),
                    result=vr,
                    next_ids=tuple(next_ids),
                )
            )
        if not vr.valid:
            raise _VertexFailed(vr)
        return vr

    def _next_ids(self, v: Vertex) -> list[str]:
        return [t for t in v.successors() if t in self.to_run and t not in self.inactive]

    def _propagate_inactive(self, v: Vertex, vr: VertexResult) -> list[str]:
        newly: list[str] = []
        queue = [e.target for e in v.out_edges if not e.loop_back and e.source_output in vr.stopped_outputs]
        while queue:
            tid = queue.pop(0)
            if tid in self.inactive or tid in self.res:
                continue
            target = self.graph.vertices[tid]
            edges = [e for e in target.in_edges if not e.loop_back]
            dead = True
            for e in edges:
                src_res = self.res.get(e.source)
                if e.source in self.inactive:
                    continue
                if src_res is not None and e.source_output in src_res.stopped_outputs:
                    continue
                dead = False
                break
            if dead:
                self.inactive.add(tid)
                newly.append(tid)
                queue.extend(e.target for e in target.out_edges if not e.loop_back)
        self.result.inactivated.extend(newly)
        return newly

    # -- loop ---------------------------------------------------------------------------
    def _run_loop(self, v: Vertex, comp: Component, vr: VertexResult) -> None:
        items = list(comp.loop_items())  # type: ignore[attr-defined]
        if len(items) > _MAX_LOOP_ITEMS:
            raise ComponentError(f"Loop over more than {_MAX_LOOP_ITEMS} items")
        body = self.graph.loop_bodies.get(v.id, [])
        body = [b for b in body if b in self.to_run]
        item_outputs = [o.name for o in v.cls.outputs if o.allows_loop]
        done_outputs = [o.name for o in v.cls.outputs if not o.allows_loop]
        back_edges = [e for e in v.in_edges if e.loop_back]
        collected: list[Any] = []
        for item in items:
            self.ctx.check()
            for name in item_outputs:
                vr.outputs[name] = item
            self.res[v.id] = vr
            for bid in body:
                self.res.pop(bid, None)
            for bid in body:
                self.ctx.check()
                if self._is_dead(bid):
                    continue
                self.run_vertex(bid)
            for e in back_edges:
                src = self.res.get(e.source)
                if src is not None and e.source_output in src.outputs:
                    collected.append(src.outputs[e.source_output])
        if not items:
            for bid in body:
                self.inactive.add(bid)
        for name in done_outputs:
            vr.outputs[name] = comp.loop_done(collected)  # type: ignore[attr-defined]
        for name in item_outputs:
            comp.stop(name)

    def _is_dead(self, vid: str) -> bool:
        if vid in self.inactive:
            return True
        edges = [e for e in self.graph.vertices[vid].in_edges if not e.loop_back]
        if not edges:
            return False
        for e in edges:
            src = self.res.get(e.source)
            if e.source in self.inactive:
                continue
            if (
                src is not None
                and e.source_output in src.stopped_outputs
                and not self.graph.vertices[e.source].cls.is_loop
            ):
                continue
            return False
        return True

    # -- whole run ------------------------------------------------------------------------
    def execute(
        self,
        *,
        input_value: str | None,
        input_type: str,
        input_components: list[str] | None,
        start_component_id: str | None,
        stop_component_id: str | None,
        previous_results: Mapping[str, VertexResult] | None,
        resume_from: Mapping[str, VertexResult] | None = None,
        inactive: set[str] | None = None,
    ) -> RunResult:
        graph, ctx = self.graph, self.ctx
        t0 = time.perf_counter()
        ctx.start_clock()
        if input_value is not None:
            kind = (input_type or "chat").lower()
            for v in graph.vertices.values():
                if not v.is_input or "input_value" not in v.cls.input_map():
                    continue
                if input_components:
                    if v.id not in input_components and v.display_name not in input_components:
                        continue
                elif kind != "any" and kind not in v.id.lower():
                    continue
                self.overrides.setdefault(v.id, {})["input_value"] = input_value
        if resume_from is not None:
            # a resumed run: what completed before the suspension is reused, the rest runs
            self.inactive |= set(inactive or ())
            self.result.inactivated.extend(sorted(self.inactive))
            done = set(resume_from) | self.inactive
            to_run = {
                vid
                for vid in graph.vertices
                if vid not in done and (graph.in_loop_body.get(vid) is None or graph.in_loop_body[vid] not in done)
            }
            reused = set(resume_from)
            previous_results = resume_from
            self.result.order.extend(resume_from)  # in the order they first ran
        else:
            to_run, reused = graph.plan(start_component_id, stop_component_id, previous_results or {})
        for vid in reused:
            self.res[vid] = previous_results[vid]  # type: ignore[index]
        self.to_run = to_run
        layers = graph.layers(to_run)
        if self.emit:
            ordered = [vid for layer in layers for vid in layer]
            full = []
            for vid in ordered:
                full.append(vid)
                full.extend(b for b in graph.loop_bodies.get(vid, []) if b in to_run)
            ctx.send_event(VerticesSorted(list(layers[0]) if layers else [], full))
            ctx.send_event(BuildStarted())
        try:
            for layer in layers:
                ctx.check()
                pending = [vid for vid in layer if not self._skip(vid)]
                pooled = [vid for vid in pending if graph.vertices[vid].cls.io_bound]
                if len(pooled) >= 2:
                    serial = [vid for vid in pending if vid not in pooled]
                    for vid in serial:
                        ctx.check()
                        self._run_top(vid)
                    with ThreadPoolExecutor(max_workers=min(8, len(pooled))) as pool:
                        # one copy of the caller's context each: a Context is entered by one thread at a time
                        futures = [pool.submit(contextvars.copy_context().run, self._run_top, vid) for vid in pooled]
                        failure: BaseException | None = None
                        for fut in futures:
                            exc = fut.exception()
                            if exc is not None and failure is None:
                                failure = exc
                        if failure is not None:
                            raise failure
                else:
                    for vid in pending:
                        ctx.check()
                        self._run_top(vid)
        except _VertexFailed as failed:
            vr = failed.vr
            self.result.status = "failed"
            self.result.error = {"vertex_id": vr.id, "display_name": vr.display_name, "message": vr.error}
            error = _error_event(vr, ctx)
            if ctx.store_message is not None and ctx.session_id:
                ctx.store_message(error)  # kept with the session, as the reference's ErrorMessage is
            if self.emit:
                ctx.send_event(RunFailed(vr.error or "Error", vr.id, vr.display_name, data=error))
        except SuspendRun as pause:
            vid = pause.vertex_id or ""
            self.result.status = "suspended"
            self.result.suspended = {
                "vertex_id": vid,
                "request_id": pause.request_id,
                "request": pause.request,
                "state": pause.state,
            }
            if self.emit:
                ctx.send_event(Suspended(vid, pause.request_id, pause.request))
        except RunCancelled:
            self.result.status = "cancelled"
            self.result.error = {"vertex_id": None, "display_name": None, "message": "Run cancelled"}
        except RunTimeout:
            self.result.status = "timed_out"
            self.result.error = {"vertex_id": None, "display_name": None, "message": "Run time limit exceeded"}
            if self.emit:
                ctx.send_event(RunFailed("Run time limit exceeded"))
        self.result.inactive = set(self.inactive)
        self.result.build_duration = time.perf_counter() - t0
        if self.emit and self.result.status == "completed":
            ctx.send_event(RunFinished(self.result.build_duration))
        return self.result

    def _skip(self, vid: str) -> bool:
        if self._is_dead(vid):
            if vid not in self.inactive:
                self.inactive.add(vid)
                self.result.inactivated.append(vid)
            return True
        return False

    def _run_top(self, vid: str) -> None:
        self.run_vertex(vid)
        self.result.order.append(vid)
        for bid in self.graph.loop_bodies.get(vid, []):
            if bid in self.res and bid not in self.result.order:
                self.result.order.append(bid)


def _error_event(vr: VertexResult, ctx: RunContext) -> dict[str, Any]:
    text = vr.error or "Error"
    msg = Message(
        text=text,
        sender="Machine",
        sender_name=vr.display_name,
        session_id=ctx.session_id,
        flow_id=ctx.flow_id,
        run_id=ctx.run_id,
        id=new_id(),
        error=True,
        category="error",
        properties={
            "source": {"id": vr.id, "display_name": vr.display_name, "source": vr.display_name},
            "text_color": "red",
        },
        # the reference's ErrorMessage: one "Error" block holding an ``error`` content
        content_blocks=[
            {
                "title": "Error",
                "allow_markdown": False,
                "media_url": None,
                "contents": [{"type": "error", "component": vr.display_name, "reason": text, "solution": None}],
            }
        ],
    )
    payload = msg.to_dict()
    payload["error"] = True
    payload["vertex_id"] = vr.id
    return payload


def run_graph(
    graph: Graph,
    context: RunContext,
    *,
    input_value: str | None = None,
    input_type: str = "chat",
    input_components: list[str] | None = None,
    start_component_id: str | None = None,
    stop_component_id: str | None = None,
    previous_results: Mapping[str, VertexResult] | None = None,
    registry: Registry | None = None,
    resume_from: Mapping[str, VertexResult] | None = None,
    inactive: set[str] | None = None,
) -> RunResult:
    """Run an already built graph. Never raises for component failures: see ``RunResult.status``/``error``.

    ``resume_from`` (with ``inactive``) continues a suspended run: those results are taken as they
    are and every other vertex runs (the answer goes in ``context.resume``).
    """
    if context.session_id is None:
        context.session_id = context.flow_id or context.run_id
    if registry is not None and getattr(context, "registry", None) is None:
        context.registry = registry
    run = _Run(graph, context, registry)
    return run.execute(
        input_value=input_value,
        input_type=input_type,
        input_components=input_components,
        start_component_id=start_component_id,
        stop_component_id=stop_component_id,
        previous_results=previous_results,
        resume_from=resume_from,
        inactive=inactive,
    )


def run_flow(
    flow_data: Mapping[str, Any],
    registry: Registry,
    context: RunContext,
    *,
    tweaks: Mapping[str, Any] | None = None,
    input_value: str | None = None,
    input_type: str = "chat",
    input_components: list[str] | None = None,
    start_component_id: str | None = None,
    stop_component_id: str | None = None,
    previous_results: Mapping[str, VertexResult] | None = None,
) -> RunResult:
    """Build (raising :class:`GraphValidationError` before any event) and run a flow.

    ``context.check_flow`` (when set) is asked first, with the graph as given (tweaks are field
    values, never node types): a refusal raises before anything is built or run.
    """
    if context.check_flow is not None:
        context.check_flow({"id": context.flow_id, "name": context.flow_name, "data": flow_data})
    graph = Graph.build(flow_data, registry, tweaks=tweaks)
    return run_graph(
        graph,
        context,
        input_value=input_value,
        input_type=input_type,
        input_components=input_components,
        start_component_id=start_component_id,
        stop_component_id=stop_component_id,
        previous_results=previous_results,
        registry=registry,
    )
