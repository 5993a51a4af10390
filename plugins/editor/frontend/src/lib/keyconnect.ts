// Keyboard connect: from a focused handle, the other end of every possible connection, each with the answer the
// canvas gives a drop there (the same `connect` rules: types, no self-connection, no duplicate edge).
import { connect, decodeHandle, encodeHandle, sourceHandleFor, targetHandleFor, templateFields, visibleOutputs } from "./flow";
import { isToolMode, toolArgumentFields } from "./toolmode";
import type { FlowEdge, FlowNode, SourceHandle, TargetHandle } from "./types";
import type { ConnectionRequest } from "./flow";

/** Where a keyboard connection starts: a node's output (`source`) or one of its input fields (`target`). */
export interface KeyOrigin {
  nodeId: string;
  handleType: "source" | "target";
  handleId: string;
}

export interface KeyCandidate {
  /** the connection this choice makes */
  request: ConnectionRequest;
  nodeId: string;
  nodeName: string;
  /** the other end's label (field or output name) */
  label: string;
  types: string[];
  /** null when the connection would be made; else why the canvas refuses it */
  refusal: string | null;
}

function nodeName(n: FlowNode): string {
  return String(n.data.node.display_name || n.data.type);
}

/** The other ends a connection from `origin` could reach: accepted ones first, each group in canvas order. */
export function keyCandidates(nodes: FlowNode[], edges: FlowEdge[], origin: KeyOrigin): KeyCandidate[] {
  const out: KeyCandidate[] = [];
  const fromSource = origin.handleType === "source";
  const h = decodeHandle<SourceHandle & TargetHandle>(origin.handleId);
  if (!h) return out;
  for (const n of nodes) {
    if (n.type !== "genericNode" || n.id === origin.nodeId || !n.data?.node) continue;
    if (fromSource) {
      const filled = isToolMode(n.data.node) ? toolArgumentFields(n.data.node) : new Set<string>();
      for (const [name, f] of templateFields(n.data.node)) {
        if (f.show === false || name === "tools_metadata" || filled.has(name)) continue;
        const th = targetHandleFor(n, name);
        if (!th) continue;
        const request = { source: origin.nodeId, sourceHandle: origin.handleId, target: n.id, targetHandle: encodeHandle(th) };
        const r = connect(nodes, edges, request);
        out.push({ request, nodeId: n.id, nodeName: nodeName(n), label: f.display_name || name, types: th.inputTypes ?? [], refusal: r.ok ? null : r.reason });
      }
    } else {
      for (const o of visibleOutputs(n.data.node)) {
        const sh = sourceHandleFor(n, o.name);
        if (!sh) continue;
        const request = { source: n.id, sourceHandle: encodeHandle(sh), target: origin.nodeId, targetHandle: origin.handleId };
        const r = connect(nodes, edges, request);
        out.push({ request, nodeId: n.id, nodeName: nodeName(n), label: o.display_name || o.name, types: sh.output_types, refusal: r.ok ? null : r.reason });
      }
    }
  }
  return [...out.filter((c) => !c.refusal), ...out.filter((c) => c.refusal)];
}

/** A handle's spoken name: "Output Message of Chat Input" / "Input Text of Chat Output". */
export function originLabel(nodes: FlowNode[], origin: KeyOrigin): string {
  const n = nodes.find((x) => x.id === origin.nodeId);
  const h = decodeHandle<SourceHandle & TargetHandle>(origin.handleId);
  if (!n || !h) return "this handle";
  if (origin.handleType === "source") {
    const o = (n.data.node.outputs ?? []).find((x) => x.name === h.name);
    return `output ${o?.display_name || h.name} of ${nodeName(n)}`;
  }
  const f = n.data.node.template?.[h.fieldName] as { display_name?: string } | undefined;
  return `input ${f?.display_name || h.fieldName} of ${nodeName(n)}`;
}
