"""Build a validated :class:`Graph` from flow JSON (the reference export format).

Rules (reference-api.md section 2):

* a group node (``data.node.flow``) runs as its inner nodes (:mod:`core.engine.groups`);
* nodes of ``type: "noteNode"`` are skipped; others resolve ``data.type`` in the registry;
* template fields ``_type``, ``code`` (never executed), ``type: "other"`` and
  ``show: false`` (unless ``override_skip: true``) are skipped, so the class
  default applies; a field set by a tweak is always used;
* ``load_from_db: true`` fields keep the variable name, resolved at run time
  through :meth:`RunContext.variable`;
* edges are read from ``data.sourceHandle`` / ``data.targetHandle`` dicts only;
  output types must intersect the target field's input types
  (``Data`` = ``JSON``, ``DataFrame`` = ``Table``);
* cycles are allowed only through a loop component's ``allows_loop`` output.

The builder works on references into the flow dict (no deep copy) and is
linear in nodes + edges.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Container, Mapping
from typing import Any, cast

from core.engine.catalog import not_installed_message
from core.engine.component import Component
from core.engine.errors import GraphValidationError
from core.engine.groups import ungroup
from core.engine.registry import Registry
from core.engine.tools import TOOL_OUTPUT

__all__ = ["Edge", "Graph", "Vertex", "apply_tweaks", "normalise_type"]

_TYPE_ALIASES = {"Data": "JSON", "DataFrame": "Table", "Data/JSON": "JSON", "DataFrame/Table": "Table"}
_SKIP_FIELDS = frozenset({"_type", "code"})


def normalise_type(name: str) -> str:
    return _TYPE_ALIASES.get(name, name)


class Edge:
    __slots__ = ("id", "loop_back", "source", "source_output", "source_types", "target", "target_field")

    def __init__(
        self,
        id: str,
        source: str,
        source_output: str,
        target: str,
        target_field: str,
        source_types: list[str],
        loop_back: bool,
    ):
        self.id = id
        self.source = source
        self.source_output = source_output
        self.target = target
        self.target_field = target_field
        self.source_types = source_types
        self.loop_back = loop_back

    def __repr__(self) -> str:
        return f"Edge({self.source}.{self.source_output} -> {self.target}.{self.target_field})"


class Vertex:
    __slots__ = (
        "cls",
        "db_fields",
        "display_name",
        "dynamic_outputs",
        "dynamic_types",
        "extra_params",
        "frozen",
        "id",
        "in_edges",
        "key",
        "out_edges",
        "params",
        "selected_output",
        "tool_fields",
        "tool_mode",
        "tools_metadata",
    )

    def __init__(self, id: str, key: str, cls: type[Component], display_name: str):
        self.id = id
        self.key = key
        self.cls = cls
        self.display_name = display_name
        self.params: dict[str, Any] = {}
        self.extra_params: dict[str, Any] = {}
        self.db_fields: dict[str, str] = {}
        self.dynamic_types: dict[str, list[str]] = {}
        self.dynamic_outputs: dict[str, list[str]] = {}
        self.in_edges: list[Edge] = []
        self.out_edges: list[Edge] = []
        self.frozen = False
        self.selected_output: str | None = None
        self.tool_mode = False  # exposes output ``component_as_tool`` (core.engine.tools)
        self.tools_metadata: Any = None  # the node's ``tools_metadata`` rows (the reference's "Actions")
        self.tool_fields: tuple[str, ...] = ()  # template fields flagged ``tool_mode`` (the tool's arguments)

    def __repr__(self) -> str:
        return f"Vertex({self.id!r}, {self.key!r})"

    @property
    def is_input(self) -> bool:
        return self.cls.is_input

    @property
    def is_output(self) -> bool:
        return self.cls.is_output

    def successors(self) -> list[str]:
        seen: list[str] = []
        for e in self.out_edges:
            if not e.loop_back and e.target not in seen:
                seen.append(e.target)
        return seen


def _mapping(value: Any) -> Mapping[str, Any]:
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else {}


def _err(loc: list[Any], msg: str, typ: str) -> dict[str, Any]:
    return {"loc": [str(x) for x in loc], "msg": msg, "type": typ}


def _node_tweaks(tweaks: Mapping[str, Any] | None, node_id: str, display_name: str) -> dict[str, Any]:
    if not tweaks:
        return {}
    out: dict[str, Any] = {k: v for k, v in tweaks.items() if not isinstance(v, dict)}
    for key in (display_name, node_id):  # the id wins over the display name
        value = tweaks.get(key)
        if isinstance(value, dict):
            out.update(value)
    return out


def apply_tweaks(flow_data: dict[str, Any], tweaks: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``flow_data`` with ``tweaks`` written into template values (for callers that store it).

    Only the touched nodes are copied. :meth:`Graph.build` applies tweaks itself without copying.
    """
    nodes = []
    for node in flow_data.get("nodes", []):
        data = node.get("data") or {}
        template = ((data.get("node") or {}).get("template")) or {}
        nt = _node_tweaks(tweaks, str(node.get("id")), str((data.get("node") or {}).get("display_name", "")))
        hits = {k: v for k, v in nt.items() if isinstance(template.get(k), dict)}
        if not hits:
            nodes.append(node)
            continue
        new_template = dict(template)
        for k, v in hits.items():
            field = dict(new_template[k])
            field["value"] = v
            field["load_from_db"] = False
            new_template[k] = field
        new_node = {**node, "data": {**data, "node": {**data["node"], "template": new_template}}}
        nodes.append(new_node)
    return {**flow_data, "nodes": nodes}


class Graph:
    """A validated flow: vertices, edges, run order and loop bodies."""

    def __init__(self) -> None:
        self.vertices: dict[str, Vertex] = {}
        self.edges: list[Edge] = []
        self.order: list[str] = []  # topological order of all vertices outside loop bodies
        self.loop_bodies: dict[str, list[str]] = {}
        self.in_loop_body: dict[str, str] = {}
        #: ordering without data: listener vertex -> the notifier vertices it runs after (see ``Component.signal``)
        self.waits_for: dict[str, set[str]] = {}

    # -- construction ---------------------------------------------------------------
    @classmethod
    def build(
        cls, flow_data: Mapping[str, Any], registry: Registry, *, tweaks: Mapping[str, Any] | None = None
    ) -> Graph:
        """Validate ``flow_data`` (``{nodes, edges}``) and build the graph; raise :class:`GraphValidationError`."""
        if not isinstance(flow_data, Mapping):
            raise GraphValidationError([_err(["data"], "Flow data must be an object", "invalid_flow")])
        flow_data = ungroup(flow_data)  # grouped components run as their inner nodes
        graph = cls()
        errors: list[dict[str, Any]] = []
        nodes = flow_data.get("nodes") or []
        raw_edges = flow_data.get("edges") or []
        if not isinstance(nodes, list) or not isinstance(raw_edges, list):
            raise GraphValidationError([_err(["data"], "Flow data needs 'nodes' and 'edges' lists", "invalid_flow")])
        for index, node in enumerate(nodes):
            if not isinstance(node, Mapping):
                errors.append(_err(["nodes", index], "Node must be an object", "invalid_node"))
                continue
            if node.get("type") == "noteNode":
                continue
            graph._add_node(node, index, registry, tweaks, errors)
        for index, edge in enumerate(raw_edges):
            if not isinstance(edge, Mapping):
                errors.append(_err(["edges", index], "Edge must be an object", "invalid_edge"))
                continue
            graph._add_edge(edge, index, errors)
        if errors:
            raise GraphValidationError(errors)
        graph._sort(errors)
        if errors:
            raise GraphValidationError(errors)
        return graph

    def _add_node(
        self,
        node: Mapping[str, Any],
        index: int,
        registry: Registry,
        tweaks: Mapping[str, Any] | None,
        errors: list[dict[str, Any]],
    ) -> None:
        data = _mapping(node.get("data"))
        node_id = str(node.get("id") or data.get("id") or "")
        if not node_id:
            errors.append(_err(["nodes", index, "id"], "Node has no id", "invalid_node"))
            return
        if node_id in self.vertices:
            errors.append(_err(["nodes", node_id, "id"], f"Duplicate node id '{node_id}'", "duplicate_node"))
            return
        key = data.get("type")
        klass = registry.get(key) if isinstance(key, str) else None
        if klass is None:
            missing = not_installed_message(key) if isinstance(key, str) else None
            errors.append(
                _err(
                    ["nodes", node_id, "data", "type"],
                    f"{missing[0].upper()}{missing[1:]} (node '{node_id}')"
                    if missing
                    else f"Unknown component '{key}' in node '{node_id}'",
                    "unknown_component",
                )
            )
            return
        fnode = _mapping(data.get("node"))
        display_name = str(fnode.get("display_name") or data.get("display_name") or klass.display_name or key)
        vertex = Vertex(node_id, klass.key, klass, display_name)
        vertex.frozen = bool(fnode.get("frozen"))
        selected = data.get("selected_output")
        vertex.selected_output = selected if isinstance(selected, str) else None
        template = _mapping(fnode.get("template"))
        vertex.tool_mode = bool(fnode.get("tool_mode"))
        metadata = template.get("tools_metadata")
        vertex.tools_metadata = metadata.get("value") if isinstance(metadata, Mapping) else None
        vertex.tool_fields = tuple(
            n for n, f in template.items() if isinstance(f, Mapping) and f.get("tool_mode") and n in klass.input_map()
        )
        inputs = klass.input_map()
        node_tweaks = _node_tweaks(tweaks, node_id, display_name)
        for name, field in template.items():
            if name in _SKIP_FIELDS or not isinstance(field, Mapping):
                continue
            declared = name in inputs
            if not declared and not klass.accepts_dynamic_fields:
                continue  # stale field of an older component version
            if not declared:
                types = field.get("input_types")
                vertex.dynamic_types[name] = list(types) if isinstance(types, list) and types else ["Message"]
            if name in node_tweaks:
                continue
            if field.get("type") == "other":
                continue
            if field.get("show") is False and not field.get("override_skip"):
                continue
            value = field.get("value")
            if field.get("type") == "file" and field.get("file_path"):
                value = field["file_path"]  # stored paths of uploaded files; ``value`` holds display names
            target = vertex.params if declared else vertex.extra_params
            if field.get("load_from_db") and isinstance(value, str) and value:
                vertex.db_fields[name] = value
                target[name] = value
                continue
            target[name] = value
        for name, value in node_tweaks.items():
            if name in inputs:
                vertex.params[name] = value
                vertex.db_fields.pop(name, None)
            elif klass.accepts_dynamic_fields and name in template:
                vertex.extra_params[name] = value
        if getattr(klass, "dynamic_outputs", False):
            for out in fnode.get("outputs") or []:
                if isinstance(out, Mapping) and out.get("name"):
                    vertex.dynamic_outputs[str(out["name"])] = [str(t) for t in out.get("types") or []]
        self.vertices[node_id] = vertex

    def _add_edge(self, edge: Mapping[str, Any], index: int, errors: list[dict[str, Any]]) -> None:
        edge_id = str(edge.get("id") or index)
        data = _mapping(edge.get("data"))
        sh = data.get("sourceHandle")
        th = data.get("targetHandle")
        if not isinstance(sh, Mapping) or not isinstance(th, Mapping):
            errors.append(
                _err(
                    ["edges", edge_id, "data"],
                    "Edge needs data.sourceHandle and data.targetHandle objects",
                    "invalid_edge",
                )
            )
            return
        source = str(edge.get("source") or sh.get("id") or "")
        target = str(edge.get("target") or th.get("id") or "")
        src = self.vertices.get(source)
        tgt = self.vertices.get(target)
        if src is None or tgt is None:
            missing = source if src is None else target
            errors.append(
                _err(
                    ["edges", edge_id, "source" if src is None else "target"],
                    f"Edge '{edge_id}' points to missing node '{missing}'",
                    "dangling_edge",
                )
            )
            return
        out_name = sh.get("name")
        out = src.cls.output_map().get(out_name) if isinstance(out_name, str) else None
        if out is not None:
            source_types = out.types
        elif out_name == TOOL_OUTPUT:
            source_types = ["Tool"]
        elif isinstance(out_name, str) and out_name in src.dynamic_outputs:
            source_types = src.dynamic_outputs[out_name] or list(sh.get("output_types") or [])
        else:
            errors.append(
                _err(
                    ["nodes", source, "outputs", out_name],
                    f"Component '{src.display_name}' ({source}) has no output '{out_name}'",
                    "unknown_output",
                )
            )
            return
        field_name = th.get("fieldName")
        loop_back = False
        if not field_name and isinstance(th.get("name"), str):
            # a loop-back edge targets an output that allows loops (e.g. Loop.item)
            tout = tgt.cls.output_map().get(th["name"])
            if tout is None or not tout.allows_loop:
                errors.append(
                    _err(
                        ["nodes", target, "outputs", th["name"]],
                        f"Component '{tgt.display_name}' ({target}) has no loop input '{th['name']}'",
                        "unknown_field",
                    )
                )
                return
            self.edges.append(Edge(edge_id, source, str(out_name), target, th["name"], source_types, True))
            src.out_edges.append(self.edges[-1])
            tgt.in_edges.append(self.edges[-1])
            return
        if not isinstance(field_name, str):
            errors.append(
                _err(
                    ["edges", edge_id, "data", "targetHandle", "fieldName"],
                    f"Edge '{edge_id}' has no target field",
                    "invalid_edge",
                )
            )
            return
        inp = tgt.cls.input_map().get(field_name)
        if inp is not None:
            accepted = inp.input_types or []
        elif field_name in tgt.dynamic_types:
            accepted = tgt.dynamic_types[field_name]
        else:
            errors.append(
                _err(
                    ["nodes", target, "template", field_name],
                    f"Component '{tgt.display_name}' ({target}) has no field '{field_name}'",
                    "unknown_field",
                )
            )
            return
        wanted = {normalise_type(t) for t in accepted}
        offered = {normalise_type(t) for t in source_types}
        if not wanted & offered:
            errors.append(
                _err(
                    ["nodes", target, "template", field_name],
                    f"Output '{out_name}' of '{src.display_name}' ({source}) gives {sorted(source_types)} but field "
                    f"'{field_name}' of '{tgt.display_name}' ({target}) accepts {sorted(accepted)}",
                    "type_mismatch",
                )
            )
            return
        e = Edge(edge_id, source, str(out_name), target, field_name, source_types, loop_back)
        self.edges.append(e)
        src.out_edges.append(e)
        tgt.in_edges.append(e)

    def _signal_waits(self) -> dict[str, set[str]]:
        """Listener -> notifiers of the same signal name (a connected name matches every notifier)."""
        notifiers: dict[str, list[str]] = {}
        listeners: list[tuple[str, str | None]] = []
        for vid, v in self.vertices.items():
            if v.cls.signal is None:
                continue
            role, field = v.cls.signal
            connected = any(e.target_field == field for e in v.in_edges)
            name = None if connected else str(v.params.get(field) or "").strip()
            if role == "notify":
                notifiers.setdefault(name or "", []).append(vid)
            elif role == "listen":
                listeners.append((vid, name))
        waits: dict[str, set[str]] = {}
        for vid, name in listeners:
            found = [n for key, ns in notifiers.items() for n in ns if name is None or key in ("", name)]
            if found:
                waits[vid] = set(found) - {vid}
        return waits

    def _kahn(self, waits: dict[str, set[str]]) -> tuple[list[str], dict[str, int]]:
        indeg = {vid: 0 for vid in self.vertices}
        for e in self.edges:
            if not e.loop_back:
                indeg[e.target] += 1
        waiters: dict[str, list[str]] = {}
        for listener, sources in waits.items():
            indeg[listener] += len(sources)
            for src in sources:
                waiters.setdefault(src, []).append(listener)
        queue = deque(vid for vid, d in indeg.items() if d == 0)
        order: list[str] = []
        while queue:
            vid = queue.popleft()
            order.append(vid)
            targets = [e.target for e in self.vertices[vid].out_edges if not e.loop_back]
            for target in targets + waiters.get(vid, []):
                indeg[target] -= 1
                if indeg[target] == 0:
                    queue.append(target)
        return order, indeg

    def _sort(self, errors: list[dict[str, Any]]) -> None:
        waits = self._signal_waits()
        order, indeg = self._kahn(waits)
        if waits and len(order) != len(self.vertices):
            waits = {}  # a signal ordering that contradicts the edges is dropped, not reported as a cycle
            order, indeg = self._kahn(waits)
        self.waits_for = waits
        if len(order) != len(self.vertices):
            stuck = [vid for vid, d in indeg.items() if d > 0]
            for vid in stuck:
                errors.append(
                    _err(
                        ["nodes", vid],
                        f"Component '{self.vertices[vid].display_name}' ({vid}) is part of a cycle "
                        "that does not go through a Loop component",
                        "cycle",
                    )
                )
            return
        position = {vid: i for i, vid in enumerate(order)}
        for vid in order:
            v = self.vertices[vid]
            if not v.cls.is_loop:
                continue
            body: set[str] = set()
            stack = [
                e.target
                for e in v.out_edges
                if not e.loop_back and (v.cls.output_map().get(e.source_output) or _NO).allows_loop
            ]
            while stack:
                cur = stack.pop()
                if cur in body or cur == vid:
                    continue
                body.add(cur)
                stack.extend(e.target for e in self.vertices[cur].out_edges if not e.loop_back)
            self.loop_bodies[vid] = sorted(body, key=position.__getitem__)
            for b in body:
                self.in_loop_body.setdefault(b, vid)
        self.order = [vid for vid in order if vid not in self.in_loop_body]

    # -- queries -----------------------------------------------------------------------------
    def ancestors(self, vid: str) -> set[str]:
        seen: set[str] = set()
        stack = [vid]
        while stack:
            cur = stack.pop()
            for e in self.vertices[cur].in_edges:
                if not e.loop_back and e.source not in seen:
                    seen.add(e.source)
                    stack.append(e.source)
        return seen

    def descendants(self, vid: str) -> set[str]:
        seen: set[str] = set()
        stack = [vid]
        while stack:
            cur = stack.pop()
            for e in self.vertices[cur].out_edges:
                if not e.loop_back and e.target not in seen:
                    seen.add(e.target)
                    stack.append(e.target)
        return seen

    def layers(self, subset: set[str] | None = None) -> list[list[str]]:
        """Group the run order into layers whose vertices depend only on earlier layers."""
        level: dict[str, int] = {}
        out: list[list[str]] = []
        for vid in self.order:
            if subset is not None and vid not in subset:
                continue
            lv = 0
            sources = [e.source for e in self.vertices[vid].in_edges if not e.loop_back]
            for source in [*sources, *self.waits_for.get(vid, ())]:
                src = self.in_loop_body.get(source, source)
                if src in level:
                    lv = max(lv, level[src] + 1)
            level[vid] = lv
            if lv == len(out):
                out.append([])
            out[lv].append(vid)
        return out

    def plan(
        self, start: str | None = None, stop: str | None = None, reusable: Container[str] = ()
    ) -> tuple[set[str], set[str]]:
        """The vertices a (partial) run executes, and the upstream ones it takes from ``reusable``.

        ``stop`` keeps the stop vertex and its ancestors; ``start`` keeps the start vertex, its
        descendants and whatever they need, where vertices needed only upstream of ``start`` and
        found in ``reusable`` (earlier results) are reused instead of run. Vertices inside a loop
        body run only with their loop.
        """
        to_run = set(self.vertices)
        reused: set[str] = set()
        if stop:
            vertex = self.find(stop)
            if vertex is not None:
                to_run = self.ancestors(vertex.id) | {vertex.id}
        if start:
            vertex = self.find(start)
            if vertex is not None:
                wanted = self.descendants(vertex.id) | {vertex.id}
                needed: set[str] = set()
                for vid in wanted:
                    needed |= self.ancestors(vid)
                reused = {vid for vid in needed - wanted if vid in reusable}
                to_run &= (wanted | needed) - reused
        to_run = {vid for vid in to_run if self.in_loop_body.get(vid) is None or self.in_loop_body[vid] in to_run}
        return to_run, reused

    def find(self, id_or_name: str) -> Vertex | None:
        v = self.vertices.get(id_or_name)
        if v is not None:
            return v
        for cand in self.vertices.values():
            if cand.display_name == id_or_name:
                return cand
        return None


class _NoOutput:
    allows_loop = False


_NO = _NoOutput()
