"""The partial-build cache: vertex results kept per user and flow for a short time.

After every build the valid results of the vertices that ran (or were reused)
are stored under ``<owner>:<flow id>`` with a **fingerprint** each; a later
build with ``start_component_id`` (or a deprecated single-vertex build) is
given, as ``previous_results``, only the cached results whose fingerprint
equals the one computed from the graph it is about to run.

A vertex's fingerprint is a digest of its node ``data`` (component type,
template values, selected output, frozen flag), of its incoming edges
(source output -> target field) and of the fingerprints of their sources,
so changing a component invalidates it and everything downstream. Input
vertices also hash the run's inputs (``input_value``, input type and
components, ``files``). Not covered, by design: global variables and other
outside state a component reads (the TTL, 5 minutes by default, bounds how
stale such a result can be), and vertices inside loop bodies (never cached).

Values are stored as tagged JSON (Message, Data/JSON, DataFrame/Table,
lists, dicts and plain JSON); a result holding anything else is not cached.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from core.engine import Data, DataFrame, Graph, Message, VertexResult
from core.engine.types import jsonable


class Unencodable(TypeError):
    pass


def encode(value: Any) -> Any:
    if value is None or isinstance(value, (str, bool, int, float)):
        return {"t": "j", "v": value}
    if isinstance(value, Message):
        return {"t": "m", "v": value.to_dict()}
    if isinstance(value, Data):
        return {"t": "d", "v": jsonable(value.data), "k": value.text_key, "dv": jsonable(value.default_value)}
    if isinstance(value, DataFrame):
        return {"t": "f", "rows": value.to_records(), "cols": list(value.columns)}
    if isinstance(value, (list, tuple)):
        return {"t": "l", "v": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"t": "o", "v": {str(k): encode(v) for k, v in value.items()}}
    raise Unencodable(type(value).__name__)


def decode(value: Any) -> Any:
    tag = value.get("t")
    if tag == "j":
        return value["v"]
    if tag == "m":
        return Message.from_dict(value["v"])
    if tag == "d":
        return Data(value["v"], text_key=value.get("k") or "text", default_value=value.get("dv", ""))
    if tag == "f":
        return DataFrame(value["rows"], columns=value["cols"])
    if tag == "l":
        return [decode(v) for v in value["v"]]
    if tag == "o":
        return {k: decode(v) for k, v in value["v"].items()}
    raise Unencodable(str(tag))


def encode_result(vr: VertexResult) -> dict[str, Any]:
    return {
        "id": vr.id,
        "key": vr.key,
        "display_name": vr.display_name,
        "outputs": {name: encode(v) for name, v in vr.outputs.items()},
        "stopped": sorted(vr.stopped_outputs),
        "timedelta": vr.timedelta,
        "duration": vr.duration,
        "logs": jsonable(vr.logs),
        "messages": [m.to_dict() for m in vr.messages if isinstance(m, Message)],
        "status": jsonable(vr.status),
    }


def decode_result(raw: Mapping[str, Any]) -> VertexResult:
    vr = VertexResult(raw["id"], raw["key"], raw["display_name"])
    vr.outputs = {name: decode(v) for name, v in raw["outputs"].items()}
    vr.stopped_outputs = set(raw.get("stopped") or ())
    vr.timedelta = float(raw.get("timedelta") or 0.0)
    vr.duration = raw.get("duration") or "0 ms"
    vr.logs = list(raw.get("logs") or [])
    vr.messages = [Message.from_dict(m) for m in raw.get("messages") or []]
    vr.status = raw.get("status")
    return vr


# --- fingerprints ----------------------------------------------------------------------------
def fingerprints(graph: Graph, flow_data: Mapping[str, Any], inputs: Mapping[str, Any] | None) -> dict[str, str]:
    """``vertex id -> digest`` for every vertex of ``graph`` (see the module docstring).

    With ``inputs`` None the digest covers the graph only (the "structural" print the
    deprecated vertex stream matches on: it has no inputs of its own).
    """
    raw_nodes: dict[str, Any] = {}
    for node in flow_data.get("nodes") or []:
        if isinstance(node, Mapping) and node.get("id") in graph.vertices:
            raw_nodes[str(node["id"])] = node.get("data")
    inputs_digest = json.dumps(jsonable(dict(inputs)), sort_keys=True) if inputs is not None else ""
    out: dict[str, str] = {}
    for vid in graph.vertices:
        stack = [(vid, False)]
        while stack:  # iterative post-order: long chains must not hit the recursion limit
            cur, ready = stack.pop()
            if cur in out:
                continue
            edges = [e for e in graph.vertices[cur].in_edges if not e.loop_back]
            if not ready:
                stack.append((cur, True))
                stack.extend((e.source, False) for e in edges if e.source not in out)
                continue
            h = hashlib.sha256()
            h.update(json.dumps(jsonable(raw_nodes.get(cur)), sort_keys=True).encode())
            if inputs is not None and graph.vertices[cur].is_input:
                h.update(inputs_digest.encode())
            for e in sorted(edges, key=lambda e: (e.target_field, e.source, e.source_output)):
                h.update(f"|{e.source_output}>{e.target_field}:{out.get(e.source, '')}".encode())
            out[cur] = h.hexdigest()[:32]
    return out


def reusable(
    entry: Mapping[str, Any] | None, prints: Mapping[str, str], graph: Graph, *, field: str = "fp"
) -> dict[str, VertexResult]:
    """The cached results still valid for this graph and these inputs (``field="sfp"``: for this graph)."""
    if not entry:
        return {}
    found: dict[str, VertexResult] = {}
    for vid, cached in (entry.get("vertices") or {}).items():
        if vid not in graph.vertices or vid in graph.in_loop_body or prints.get(vid) != cached.get(field):
            continue
        try:
            found[vid] = decode_result(cached["r"])
        except (Unencodable, KeyError, TypeError, ValueError, AttributeError):
            continue
    return found


def updated_entry(
    entry: Mapping[str, Any] | None,
    prints: Mapping[str, str],
    graph: Graph,
    results: Mapping[str, VertexResult],
    structure: Mapping[str, str],
) -> dict[str, Any]:
    """The cache entry after a run: still-valid old results plus this run's valid results."""
    vertices: dict[str, Any] = {}
    for vid, cached in ((entry or {}).get("vertices") or {}).items():
        if prints.get(vid) == cached.get("fp"):
            vertices[vid] = cached
    for vid, vr in results.items():
        if vid not in graph.vertices or vid in graph.in_loop_body or not vr.valid or vid not in prints:
            continue
        try:
            vertices[vid] = {"fp": prints[vid], "sfp": structure.get(vid), "r": encode_result(vr)}
        except Unencodable:
            vertices.pop(vid, None)
    return {"vertices": vertices}


def cache_key(owner: str, flow_id: str) -> str:
    return f"{owner}:{flow_id}"
