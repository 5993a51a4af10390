// Nodes whose exported JSON ships an empty (or no) `outputs` list have no source handles, so their edges
// cannot be drawn. On load the editor fills such nodes' outputs from the catalog entry of their component
// type, then re-derives the outputs that depend on a field's value (dynamic.ts), as the reference's server
// does when it rebuilds a node.
import { refreshNode } from "./dynamic";
import { deepClone, encodeHandle, sourceHandleFor } from "./flow";
import type { FlowEdge, FlowNode, FrontendNode } from "./types";

/** Fill missing outputs from the catalog; returns the same array when nothing changed, and the ids touched. */
export function fillMissingOutputs(nodes: FlowNode[], lookup: (componentKey: string) => FrontendNode | null): { nodes: FlowNode[]; changed: string[] } {
  const changed: string[] = [];
  const next = nodes.map((n) => {
    if (n.type !== "genericNode" || (n.data.node.outputs ?? []).length > 0) return n;
    const entry = lookup(n.data.type);
    if (!entry?.outputs?.length) return n;
    const filled: FlowNode = { ...n, data: { ...n.data, node: { ...n.data.node, outputs: deepClone(entry.outputs) } } };
    changed.push(n.id);
    return refreshNode(filled);
  });
  return { nodes: changed.length ? next : nodes, changed };
}

/**
 * Edges whose source handle names an output the node has, but with other types (an export written before the
 * node's outputs were derived), point at a handle that is not drawn. Re-encode them from the node's output so
 * they show; the connection itself (source, output name, target field) is unchanged.
 */
export function syncEdgeHandles(nodes: FlowNode[], edges: FlowEdge[]): FlowEdge[] {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  let touched = false;
  const next = edges.map((e) => {
    const src = byId.get(e.source);
    if (!src || src.type !== "genericNode") return e;
    const sh = sourceHandleFor(src, e.data.sourceHandle.name);
    if (!sh) return e;
    const encoded = encodeHandle(sh);
    if (encoded === e.sourceHandle) return e;
    touched = true;
    return { ...e, sourceHandle: encoded, data: { ...e.data, sourceHandle: sh } };
  });
  return touched ? next : edges;
}
