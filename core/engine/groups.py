"""Grouped components: a node whose ``data.node.flow`` holds a sub-graph is flattened before the graph is built.

The reference editor stores a group (Ctrl+G) as one node in the flow JSON:

* ``data.node.flow.data`` is ``{nodes, edges}`` of the grouped components, with their own ids;
* ``data.node.template`` exposes the inner fields that are not connected inside the group, each with
  ``proxy: {id, field}`` naming the inner node and field; its ``value`` is the one that runs;
* ``data.node.outputs`` exposes the inner outputs, each with ``proxy: {id, name}``;
* an edge into the group targets a template key (``targetHandle.fieldName``), its ``targetHandle.proxy``
  names the inner field; an edge out of it names the group output (``sourceHandle.name``).

:func:`ungroup` returns the same graph with every group replaced by its inner nodes and edges, the outer
edges re-pointed through the proxies (groups inside groups too). An edge leaving a group whose output has
no proxy comes from the group's last node (the one without outgoing edges), as the reference does. A group's
``frozen`` flag freezes its inner nodes. A graph without groups is returned as is (no copy).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

__all__ = ["has_groups", "ungroup"]

_MAX_DEPTH = 16


def _group_flow(node: Any) -> Mapping[str, Any] | None:
    data = node.get("data") if isinstance(node, Mapping) else None
    inner = data.get("node") if isinstance(data, Mapping) else None
    flow = inner.get("flow") if isinstance(inner, Mapping) else None
    graph = flow.get("data") if isinstance(flow, Mapping) else None
    return graph if isinstance(graph, Mapping) else None


def has_groups(flow_data: Mapping[str, Any]) -> bool:
    """Whether any top-level node of ``flow_data`` is a group."""
    nodes = flow_data.get("nodes")
    return isinstance(nodes, list) and any(_group_flow(n) is not None for n in nodes)


def _node_id(node: Mapping[str, Any]) -> str:
    data = node.get("data")
    return str(node.get("id") or (data.get("id") if isinstance(data, Mapping) else None) or "")


def _last_node(nodes: list[Any], edges: list[Any]) -> Mapping[str, Any] | None:
    sources = {e.get("source") for e in edges if isinstance(e, Mapping)}
    for n in nodes:
        if isinstance(n, Mapping) and n.get("type") != "noteNode" and _node_id(n) not in sources:
            return n
    return None


def _apply_template(template: Mapping[str, Any], inner_nodes: list[Any]) -> None:
    """The group's exposed field values (what the user set on the group) go into the inner nodes."""
    by_id = {_node_id(n): n for n in inner_nodes if isinstance(n, Mapping)}
    for field in template.values():
        proxy = field.get("proxy") if isinstance(field, Mapping) else None
        if not isinstance(proxy, Mapping):
            continue
        node = by_id.get(str(proxy.get("id")))
        inner_template = node.get("data", {}).get("node", {}).get("template") if node else None
        name = proxy.get("field")
        if not isinstance(inner_template, dict) or not isinstance(name, str):
            continue
        current = inner_template.get(name)
        merged = dict(field)
        merged.pop("proxy", None)
        if isinstance(current, Mapping):
            # the inner node decides whether and how its field shows (and, for a group inside, where it leads);
            # the outer group decides the value
            for key in ("show", "advanced", "display_name", "name", "proxy"):
                if key in current:
                    merged[key] = current[key]
        inner_template[name] = merged


def _retarget(edge: dict[str, Any], group_id: str, template: Mapping[str, Any]) -> None:
    th = edge.get("data", {}).get("targetHandle")
    if not isinstance(th, dict):
        return
    proxy = th.get("proxy")
    if not isinstance(proxy, Mapping):
        field = template.get(str(th.get("fieldName")))
        proxy = field.get("proxy") if isinstance(field, Mapping) else None
    if not isinstance(proxy, Mapping) or not proxy.get("id") or not proxy.get("field"):
        return  # left pointing at the group: the graph builder reports the dangling edge
    inner_id = str(proxy["id"])
    edge["target"] = inner_id
    edge["data"]["targetHandle"] = {
        **{k: v for k, v in th.items() if k != "proxy"},
        "id": inner_id,
        "fieldName": proxy["field"],
    }


def _resource(edge: dict[str, Any], outputs: Any, inner_nodes: list[Any], inner_edges: list[Any]) -> None:
    sh = edge.get("data", {}).get("sourceHandle")
    if not isinstance(sh, dict):
        return
    proxy = sh.get("proxy")
    if not isinstance(proxy, Mapping):
        for out in outputs if isinstance(outputs, list) else ():
            if isinstance(out, Mapping) and out.get("name") == sh.get("name") and isinstance(out.get("proxy"), Mapping):
                proxy = out["proxy"]
                break
    if isinstance(proxy, Mapping) and proxy.get("id") and proxy.get("name"):
        inner_id, name = str(proxy["id"]), str(proxy["name"])
    else:
        last = _last_node(inner_nodes, inner_edges)
        if last is None:
            return
        inner_id, name = _node_id(last), str(sh.get("name"))
    edge["source"] = inner_id
    edge["data"]["sourceHandle"] = {**{k: v for k, v in sh.items() if k != "proxy"}, "id": inner_id, "name": name}


def _flatten(flow_data: Mapping[str, Any]) -> dict[str, Any]:
    """One level: each top-level group becomes its inner nodes (a group inside one is now top-level)."""
    nodes: list[Any] = list(flow_data.get("nodes") or [])
    edges: list[Any] = [copy.deepcopy(e) for e in flow_data.get("edges") or []]
    out_nodes: list[Any] = []
    for node in nodes:
        graph = _group_flow(node)
        if graph is None:
            out_nodes.append(node)
            continue
        group_id = _node_id(node)
        fnode = node["data"]["node"]
        inner_nodes = copy.deepcopy(list(graph.get("nodes") or []))
        inner_edges = copy.deepcopy(list(graph.get("edges") or []))
        template = fnode.get("template") if isinstance(fnode.get("template"), Mapping) else {}
        _apply_template(template, inner_nodes)
        if fnode.get("frozen"):
            for n in inner_nodes:
                if isinstance(n, Mapping) and isinstance(n.get("data", {}).get("node"), dict):
                    n["data"]["node"]["frozen"] = True
        for e in edges:
            if not isinstance(e, dict) or not isinstance(e.get("data"), dict):
                continue
            if e.get("target") == group_id:
                _retarget(e, group_id, template)
            if e.get("source") == group_id:
                _resource(e, fnode.get("outputs"), inner_nodes, inner_edges)
        out_nodes.extend(inner_nodes)
        edges.extend(inner_edges)
    return {**flow_data, "nodes": out_nodes, "edges": edges}


def ungroup(flow_data: Mapping[str, Any]) -> Mapping[str, Any]:
    """``flow_data`` with its groups flattened (see the module notes); unchanged when it has none."""
    if not isinstance(flow_data, Mapping) or not has_groups(flow_data):
        return flow_data
    flat = _flatten(flow_data)
    for _ in range(_MAX_DEPTH):  # groups inside groups, one level a pass (outer proxies name inner groups)
        if not has_groups(flat):
            break
        flat = _flatten(flat)
    return flat
