"""Enforcement: refuse runs of flows that use blocked components, and say what is blocked.

``check_run`` is on every run's path, so it is cheap: the blocked set comes
from the per-process snapshot, is expanded once per (policy revision, registry
snapshot) to every key that resolves to a blocked component (aliases and
legacy keys included), and checking a flow is one set lookup per node type.
"""

from __future__ import annotations

from typing import Any

from core.contracts import FlowRecord
from core.engine.nodes import flow_node_types, node_types
from core.errors import ApiError

_EXPANDED: dict[tuple[tuple[int, int], int], frozenset[str]] = {}


def expanded(blocked: frozenset[str], revisions: tuple[int, int], reg: Any) -> frozenset[str]:
    """Every key that means a blocked component in ``reg`` (canonical keys, aliases, the keys as given)."""
    key = (revisions, id(reg))
    hit = _EXPANDED.get(key)
    if hit is not None:
        return hit
    out = set(blocked)
    canonical = set()
    for b in blocked:
        klass = reg.get(b)
        if klass is not None:
            canonical.add(klass.key)
    out |= canonical
    out |= {alias for alias, target in reg.aliases.items() if target in canonical}
    value = frozenset(out)
    if len(_EXPANDED) > 32:
        _EXPANDED.clear()
    _EXPANDED[key] = value
    return value


def blocked_in(data: Any, keys: frozenset[str]) -> list[str]:
    """The blocked node types of a graph, sorted."""
    if not keys:
        return []
    return sorted(t for t in node_types(data) if t in keys)


def check(flow: FlowRecord, keys: frozenset[str]) -> None:
    found = sorted(t for t in flow_node_types(flow.data) if t in keys)
    if found:
        names = ", ".join(f"'{k}'" for k in found)
        noun = "Component" if len(found) == 1 else "Components"
        raise ApiError(403, f"{noun} {names} blocked by the catalog policy: this flow cannot run")


def display_names(keys: frozenset[str], reg: Any) -> list[str]:
    """Keys and display names of the blocked components (the reference lists both)."""
    out = set()
    for k in keys:
        out.add(k)
        klass = reg.get(k)
        if klass is not None:
            out.add(klass.key)
            if klass.display_name:
                out.add(klass.display_name)
    return sorted(out)
