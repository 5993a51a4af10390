"""The component types a flow uses, cheaply: for policy checks that run before every run.

:func:`flow_node_types` caches the answer per stored flow version (``id`` and
``updated_at``, which every flow write changes), so a repeated run of the same
flow costs one dictionary lookup; an unsaved graph (no ``updated_at``) is
scanned each time.
"""

from __future__ import annotations

from typing import Any

__all__ = ["flow_node_types", "node_types"]

_RECENT: dict[int, tuple[Any, tuple[str, ...]]] = {}
_RECENT_MAX = 64


def node_types(data: Any) -> tuple[str, ...]:
    """The distinct ``data.type`` of every node of a graph (nested group flows included), first seen first."""
    out: dict[str, None] = {}
    stack = [data]
    while stack:
        graph = stack.pop()
        if not isinstance(graph, dict):
            continue
        for node in graph.get("nodes") or ():
            inner = node.get("data") if isinstance(node, dict) else None
            if not isinstance(inner, dict):
                continue
            kind = inner.get("type")
            if isinstance(kind, str) and kind:
                out[kind] = None
            nested = inner.get("node")
            if isinstance(nested, dict) and isinstance(nested.get("flow"), dict):
                stack.append(nested["flow"].get("data"))
    return tuple(out)


def flow_node_types(data: Any) -> tuple[str, ...]:
    """:func:`node_types` of a flow's graph ``data``, remembered for the same graph object."""
    hit = _RECENT.get(id(data))
    if hit is not None and hit[0] is data:
        return hit[1]
    types = node_types(data)
    if len(_RECENT) >= _RECENT_MAX:
        _RECENT.clear()
    _RECENT[id(data)] = (data, types)
    return types
