"""A node-level diff of two flow graphs (``GET .../versions/{id}/diff``).

Nodes are matched by id: ``added`` and ``removed`` nodes, ``moved`` nodes (position changed), and
``changed`` nodes with the template fields whose value changed (``field``, ``before``, ``after``;
secret fields name the change without either value) and other changed members of the node's
data (``display_name``, ``description``...). Edges are matched by source, target and their handles:
``edges.added`` / ``edges.removed``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SECRET_MASK = "********"  # noqa: S105 - the mask shown instead of a secret


def _nodes(graph: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    nodes = graph.get("nodes") if isinstance(graph, Mapping) else None
    return {str(n.get("id")): n for n in nodes or [] if isinstance(n, Mapping)}


def _edge_key(edge: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (
        str(edge.get("source")),
        str(edge.get("target")),
        str(edge.get("sourceHandle") or ""),
        str(edge.get("targetHandle") or ""),
    )


def _edges(graph: Mapping[str, Any] | None) -> dict[tuple[str, str, str, str], Mapping[str, Any]]:
    edges = graph.get("edges") if isinstance(graph, Mapping) else None
    return {_edge_key(e): e for e in edges or [] if isinstance(e, Mapping)}


def _inner(node: Mapping[str, Any]) -> Mapping[str, Any]:
    data = node.get("data")
    inner = data.get("node") if isinstance(data, Mapping) else None
    return inner if isinstance(inner, Mapping) else {}


def _summary(node: Mapping[str, Any]) -> dict[str, Any]:
    data = node.get("data") if isinstance(node.get("data"), Mapping) else {}
    inner = _inner(node)
    return {
        "id": node.get("id"),
        "type": data.get("type") if isinstance(data, Mapping) else None,
        "display_name": inner.get("display_name"),
    }


def _field_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[dict[str, Any]]:
    t0: Mapping[str, Any] = before["template"] if isinstance(before.get("template"), Mapping) else {}
    t1: Mapping[str, Any] = after["template"] if isinstance(after.get("template"), Mapping) else {}
    out: list[dict[str, Any]] = []
    for name in sorted(set(t0) | set(t1)):
        f0, f1 = t0.get(name), t1.get(name)
        v0 = f0.get("value") if isinstance(f0, Mapping) else f0
        v1 = f1.get("value") if isinstance(f1, Mapping) else f1
        if name == "_type" or v0 == v1:
            continue
        secret = any(isinstance(f, Mapping) and f.get("password") for f in (f0, f1))
        out.append(
            {
                "field": name,
                "before": SECRET_MASK if secret and v0 else v0,
                "after": SECRET_MASK if secret and v1 else v1,
            }
        )
    return out


def _member_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    names = (set(before) | set(after)) - {"template"}
    return sorted(n for n in names if before.get(n) != after.get(n))


def diff(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> dict[str, Any]:
    """What changed from ``before`` to ``after`` (either may be None: an empty graph)."""
    n0, n1 = _nodes(before), _nodes(after)
    added = [_summary(n1[i]) for i in n1 if i not in n0]
    removed = [_summary(n0[i]) for i in n0 if i not in n1]
    moved: list[dict[str, Any]] = []
    changed: list[dict[str, Any]] = []
    for node_id in (i for i in n1 if i in n0):
        a, b = n0[node_id], n1[node_id]
        if a.get("position") != b.get("position"):
            moved.append({**_summary(b), "before": a.get("position"), "after": b.get("position")})
        fields = _field_changes(_inner(a), _inner(b))
        members = _member_changes(_inner(a), _inner(b))
        if fields or members:
            changed.append({**_summary(b), "fields": fields, "members": members})
    e0, e1 = _edges(before), _edges(after)

    def edge_out(e: Mapping[str, Any]) -> dict[str, Any]:
        return {k: e.get(k) for k in ("id", "source", "target", "sourceHandle", "targetHandle")}

    edges = {
        "added": [edge_out(e1[k]) for k in e1 if k not in e0],
        "removed": [edge_out(e0[k]) for k in e0 if k not in e1],
    }
    return {
        "added": added,
        "removed": removed,
        "moved": moved,
        "changed": changed,
        "edges": edges,
        "unchanged": not (added or removed or moved or changed or edges["added"] or edges["removed"]),
    }
