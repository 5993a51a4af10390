// Grouping components (Ctrl+G) and ungrouping, in the reference's flow JSON shape:
// the group is one genericNode whose `data.node.flow.data` holds the inner nodes and edges; its template exposes
// the inner fields not connected inside the group (`<field>_<node id>`, with `proxy: {id, field}`), its outputs
// the inner outputs not used inside it (`<output>_<node id>`, with `proxy: {id, name}`). The server runs a group
// as its inner nodes (core.engine.groups).
import { deepClone, edgeId, encodeHandle, isTemplateField, newNodeId, sourceHandleFor, targetHandleFor, templateFields, visibleOutputs } from "./flow";
import type { FlowEdge, FlowNode, FrontendNode, NodeOutput, SourceHandle, TargetHandle, TemplateField } from "./types";
import { formatSeconds, type NodeRun } from "./build";

export const GROUP_TYPE = "GroupNode";

export interface FieldProxy {
  id: string;
  field: string;
}
export interface OutputProxy {
  id: string;
  name: string;
  nodeDisplayName?: string;
}

/** The inner graph of a group node, or null for any other node. */
export function groupFlow(node: FlowNode): { nodes: FlowNode[]; edges: FlowEdge[] } | null {
  const flow = node.data?.node?.flow as { data?: { nodes?: FlowNode[]; edges?: FlowEdge[] } } | undefined;
  if (!flow || typeof flow !== "object" || !flow.data || !Array.isArray(flow.data.nodes)) return null;
  return { nodes: flow.data.nodes, edges: Array.isArray(flow.data.edges) ? flow.data.edges : [] };
}

export function isGroup(node: FlowNode): boolean {
  return groupFlow(node) !== null;
}

function label(n: FlowNode): string {
  return String(n.data.node.display_name || n.data.type);
}

export type GroupResult = { ok: true; nodes: FlowNode[]; edges: FlowEdge[]; groupId: string } | { ok: false; reason: string };

/** Group the components `ids` of the graph into one group node (notes stay outside). */
export function groupNodes(nodes: FlowNode[], edges: FlowEdge[], ids: Iterable<string>, name = "Group"): GroupResult {
  const wanted = new Set(ids);
  const inner = nodes.filter((n) => wanted.has(n.id) && n.type === "genericNode");
  if (inner.length < 2) return { ok: false, reason: "Select at least two components to group." };
  const inside = new Set(inner.map((n) => n.id));
  const innerEdges = edges.filter((e) => inside.has(e.source) && inside.has(e.target));
  const crossingIn = edges.filter((e) => !inside.has(e.source) && inside.has(e.target));
  const crossingOut = edges.filter((e) => inside.has(e.source) && !inside.has(e.target));
  const connectedInside = new Set(innerEdges.map((e) => `${e.target}\u0000${e.data.targetHandle.fieldName}`));
  const usedInside = new Set(innerEdges.map((e) => `${e.source}\u0000${e.data.sourceHandle.name}`));
  const usedOutside = new Set(crossingOut.map((e) => `${e.source}\u0000${e.data.sourceHandle.name}`));

  const gid = newNodeId(GROUP_TYPE, new Set(nodes.map((n) => n.id)));
  const template: Record<string, TemplateField> = {};
  const order: string[] = [];
  const outputs: NodeOutput[] = [];
  for (const n of inner) {
    for (const [fname, f] of templateFields(n.data.node)) {
      if (fname === "code" || connectedInside.has(`${n.id}\u0000${fname}`)) continue;
      const key = `${fname}_${n.id}`;
      template[key] = { ...deepClone(f), proxy: { id: n.id, field: fname } satisfies FieldProxy, display_name: f.display_name || fname };
      order.push(key);
    }
    for (const o of visibleOutputs(n.data.node)) {
      const k = `${n.id}\u0000${o.name}`;
      if (usedInside.has(k) && !usedOutside.has(k)) continue;
      outputs.push({ ...deepClone(o), name: `${o.name}_${n.id}`, display_name: o.display_name || o.name, proxy: { id: n.id, name: o.name, nodeDisplayName: label(n) } satisfies OutputProxy });
    }
  }
  const xs = inner.map((n) => n.position.x);
  const ys = inner.map((n) => n.position.y);
  const group: FlowNode = {
    id: gid,
    type: "genericNode",
    position: { x: Math.min(...xs), y: Math.min(...ys) },
    selected: true,
    data: {
      id: gid,
      type: GROUP_TYPE,
      showNode: true,
      node: {
        display_name: name,
        description: `${inner.length} components: ${inner.map(label).join(", ")}`,
        documentation: "",
        template,
        field_order: order,
        outputs,
        base_classes: [...new Set(outputs.flatMap((o) => o.types))],
        flow: { name, description: "", data: { nodes: inner.map((n) => ({ ...stripUi(n) })), edges: innerEdges.map(stripEdge) } },
      } as FrontendNode,
    },
  };
  const rest = nodes.filter((n) => !inside.has(n.id)).map((n) => (n.selected ? { ...n, selected: false } : n));
  const kept = edges.filter((e) => !inside.has(e.source) && !inside.has(e.target));
  const rewired: FlowEdge[] = [];
  for (const e of crossingIn) {
    const th = targetHandleFor(group, `${e.data.targetHandle.fieldName}_${e.target}`);
    if (th) rewired.push(makeEdge(e.source, e.data.sourceHandle, gid, th));
  }
  for (const e of crossingOut) {
    const sh = sourceHandleFor(group, `${e.data.sourceHandle.name}_${e.source}`);
    if (sh) rewired.push(makeEdge(gid, sh, e.target, e.data.targetHandle));
  }
  return { ok: true, nodes: [...rest, group], edges: [...kept, ...rewired], groupId: gid };
}

/** Put a group's components back on the canvas, with the values set on the group and its edges re-pointed. */
export function ungroupNode(nodes: FlowNode[], edges: FlowEdge[], gid: string): GroupResult {
  const group = nodes.find((n) => n.id === gid);
  const flow = group ? groupFlow(group) : null;
  if (!group || !flow) return { ok: false, reason: "This component is not a group." };
  const template = group.data.node.template;
  const innerNodes = deepClone(flow.nodes);
  const byId = new Map(innerNodes.map((n) => [n.id, n]));
  // the values set on the group win
  for (const f of Object.values(template)) {
    if (!isTemplateField(f) || !f.proxy) continue;
    const p = f.proxy as FieldProxy;
    const n = byId.get(p.id);
    const cur = n?.data.node.template[p.field];
    if (!n || !isTemplateField(cur)) continue;
    n.data.node.template[p.field] = { ...cur, value: f.value, ...(f.load_from_db !== undefined ? { load_from_db: f.load_from_db } : {}) };
  }
  // the components land where the group is now
  const minX = Math.min(...innerNodes.map((n) => n.position.x));
  const minY = Math.min(...innerNodes.map((n) => n.position.y));
  const dx = group.position.x - (Number.isFinite(minX) ? minX : 0);
  const dy = group.position.y - (Number.isFinite(minY) ? minY : 0);
  const taken = new Set(nodes.map((n) => n.id));
  const placed = innerNodes.map((n) => ({ ...n, position: { x: n.position.x + dx, y: n.position.y + dy }, selected: true }));
  if (placed.some((n) => taken.has(n.id))) return { ok: false, reason: "A component of this group is already on the canvas." };
  const outputs = group.data.node.outputs ?? [];
  const rewired: FlowEdge[] = [];
  for (const e of edges) {
    if (e.target === gid) {
      const f = template[e.data.targetHandle.fieldName];
      const p = (isTemplateField(f) ? f.proxy : null) as FieldProxy | null;
      const n = p ? byId.get(p.id) : undefined;
      const th = n && p ? targetHandleFor(n, p.field) : null;
      if (th) rewired.push(makeEdge(e.source, e.data.sourceHandle, n!.id, th));
    } else if (e.source === gid) {
      const o = outputs.find((x) => x.name === e.data.sourceHandle.name);
      const p = (o?.proxy ?? null) as OutputProxy | null;
      const n = p ? byId.get(p.id) : undefined;
      const sh = n && p ? sourceHandleFor(n, p.name) : null;
      if (sh) rewired.push(makeEdge(n!.id, sh, e.target, e.data.targetHandle));
    }
  }
  const rest = nodes.filter((n) => n.id !== gid).map((n) => (n.selected ? { ...n, selected: false } : n));
  const kept = edges.filter((e) => e.source !== gid && e.target !== gid);
  return { ok: true, nodes: [...rest, ...placed], edges: [...kept, ...flow.edges.map((e) => ({ ...e })), ...rewired], groupId: gid };
}

/** For a field of a group node: the inner component it belongs to (its label on the group). */
export function proxyLabel(group: FrontendNode, f: TemplateField): string | null {
  const p = f.proxy as FieldProxy | undefined;
  const flow = p ? (group.flow as { data?: { nodes?: FlowNode[] } } | undefined) : undefined;
  const n = flow?.data?.nodes?.find((x) => x.id === p!.id);
  return n ? label(n) : null;
}

function makeEdge(source: string, sh: SourceHandle, target: string, th: TargetHandle): FlowEdge {
  const s = encodeHandle(sh);
  const t = encodeHandle(th);
  return { id: edgeId(source, s, target, t), source, target, sourceHandle: s, targetHandle: t, data: { sourceHandle: sh, targetHandle: th } };
}

function stripUi(n: FlowNode): FlowNode {
  const { selected: _s, dragging: _d, measured: _m, ...rest } = n;
  return rest as FlowNode;
}

function stripEdge(e: FlowEdge): FlowEdge {
  const { selected: _s, animated: _a, style: _st, ...rest } = e as FlowEdge & { style?: unknown };
  return rest as FlowEdge;
}

/** The ids of the components a group runs as (groups inside it included), in the group's order. */
export function innerIds(node: FlowNode): string[] {
  const g = groupFlow(node);
  if (!g) return [];
  return g.nodes.flatMap((n) => (isGroup(n) ? innerIds(n) : n.type === "noteNode" ? [] : [n.id]));
}

/**
 * A group's build status from its inner components' (the server runs a group as its inner nodes): running while
 * any runs, error when one failed (its message, named), done when all that ran are done (the preview of the last
 * one with output), waiting while all wait. Undefined before a run touched any of them.
 */
export function groupRun(ids: readonly string[], runs: Record<string, NodeRun>, names: Record<string, string> = {}): NodeRun | undefined {
  const seen = ids.map((id) => [id, runs[id]] as const).filter((x): x is readonly [string, NodeRun] => x[1] !== undefined);
  if (!seen.length) return undefined;
  const failed = seen.find(([, r]) => r.status === "error");
  if (failed) {
    const [id, r] = failed;
    return { status: "error", error: `${names[id] ?? id}: ${r.error ?? "failed"}`, logs: seen.flatMap(([, x]) => x.logs ?? []) };
  }
  if (seen.some(([, r]) => r.status === "running")) return { status: "running" };
  if (seen.every(([, r]) => r.status === "queued")) return { status: "queued" };
  if (seen.some(([, r]) => r.status === "queued")) return { status: "running" };
  const done = seen.filter(([, r]) => r.status === "done");
  if (!done.length) return { status: "inactive" };
  const secs = done.map(([, r]) => parseSeconds(r.duration));
  const total = secs.every((s) => s !== null) ? (secs as number[]).reduce((a, b) => a + b, 0) : null;
  const preview = [...done].reverse().find(([, r]) => r.preview)?.[1].preview;
  return { status: "done", duration: total === null ? undefined : formatSeconds(total), preview, logs: done.flatMap(([, r]) => r.logs ?? []) };
}

function parseSeconds(d: string | undefined): number | null {
  if (!d) return null;
  const m = /^([\d.]+)\s*(ms|s|seconds?)$/.exec(d.trim());
  if (!m) return null;
  return m[2] === "ms" ? Number(m[1]) / 1000 : Number(m[1]);
}

/** What "run up to" a group stops at: its last component (the one whose output leaves the group). */
export function groupStopId(node: FlowNode): string {
  const g = groupFlow(node);
  if (!g) return node.id;
  const sources = new Set(g.edges.map((e) => e.source));
  const last = [...g.nodes].reverse().find((n) => n.type !== "noteNode" && !sources.has(n.id));
  return last ? groupStopId(last) : node.id;
}
