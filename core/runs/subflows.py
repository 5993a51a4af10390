"""The run checks of the top flow, applied to the sub-flows it names, before anything runs.

A component that runs another flow of the user (Run Flow, Sub Flow, Flow as Tool) says which with
a classmethod ``subflows(params) -> [flow id or name]`` (as ``model_providers`` names providers).
:func:`check_subflows` looks each one up as the engine will (``find_flow``, scoped to the run's
user), asks ``check_run`` (surface ``"subflow"``) and goes on into its own sub-flows, up to the
engine's nesting limit: a blocked component anywhere below answers 403 naming the chain, as it
does in the top flow. A sub-flow chosen only while the run goes (a value from another component)
is checked by the engine itself when it loads it (``RunContext.check_flow``): the run then fails
naming the component.
"""

from __future__ import annotations

from collections.abc import Mapping

from flask import Flask

from core.appstate import state
from core.contracts import FlowRecord
from core.engine import Graph, GraphValidationError, Registry
from core.engine.run_context import RunContext
from core.errors import ApiError

__all__ = ["check_subflows"]

MAX_DEPTH = RunContext.max_subflow_depth


def named_subflows(graph: Graph) -> list[tuple[str, str]]:
    """``(component display name, flow id or name)`` of every sub-flow the graph's components name."""
    out: list[tuple[str, str]] = []
    for vertex in graph.vertices.values():
        named = getattr(vertex.cls, "subflows", None)
        if named is None:
            continue
        out.extend((vertex.display_name, str(ident)) for ident in named(vertex.params) if ident)
    return out


def check_subflows(
    graph: Graph,
    user_id: str | None,
    registry: Registry,
    app: Flask | None = None,
    *,
    seen: frozenset[str] = frozenset(),
    depth: int = 0,
) -> None:
    """Raise the ``check_run`` refusal of any sub-flow ``graph`` names (nested ones included), prefixed by the
    chain of sub-flows that leads to it. Sub-flows that cannot be found or built are left to the engine."""
    found_any = named_subflows(graph)
    if not found_any or depth >= MAX_DEPTH:
        return
    hooks = state(app).host.hooks
    for component, ident in found_any:
        flow = hooks.find_flow(user_id=user_id, flow_id_or_name=ident, public=False)
        if flow is None or not isinstance(flow.data, Mapping):
            continue
        flow_id = flow.id or ident
        if flow_id in seen:
            continue  # a cycle: the engine refuses it when it gets there
        name = flow.name or ident
        try:
            hooks.check_run(user_id=user_id or None, flow=flow, surface="subflow")
            sub = _graph(flow, registry)
            if sub is not None:
                check_subflows(sub, user_id, registry, app, seen=seen | {flow_id}, depth=depth + 1)
        except ApiError as exc:
            raise ApiError(
                exc.status, f"Sub-flow '{name}' (component '{component}') cannot run: {exc.detail}"
            ) from None


_graphs: dict[tuple[str, str], tuple[Registry, Graph]] = {}
_GRAPHS_MAX = 256


def _graph(flow: FlowRecord, registry: Registry) -> Graph | None:
    """The sub-flow's graph (built once per stored version and registry), or None when it does not build."""
    key = (flow.id, str(flow.updated_at))
    hit = _graphs.get(key) if flow.updated_at else None
    if hit is not None and hit[0] is registry:
        return hit[1]
    try:
        graph = Graph.build(flow.data or {}, registry)
    except GraphValidationError:
        return None
    if flow.updated_at:
        if len(_graphs) >= _GRAPHS_MAX:
            _graphs.pop(next(iter(_graphs)))
        _graphs[key] = (registry, graph)
    return graph
