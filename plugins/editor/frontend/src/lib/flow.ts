// Flow (de)serialisation in the reference's export format and pure graph edits.
import { canonicalType, fieldHasHandle, typesCompatible } from "./compat";
import type {
  FlowData,
  FlowEdge,
  FlowNode,
  FrontendNode,
  SourceHandle,
  TargetHandle,
  TemplateField,
  Viewport,
} from "./types";

const ID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

export function randomSuffix(n = 5): string {
  let s = "";
  for (let i = 0; i < n; i++) s += ID_CHARS[Math.floor(Math.random() * ID_CHARS.length)];
  return s;
}

export function newNodeId(key: string, taken?: Set<string>): string {
  for (;;) {
    const id = `${key}-${randomSuffix()}`;
    if (!taken || !taken.has(id)) return id;
  }
}

/** JSON with sorted keys and `", "` / `": "` separators (the reference's handle strings). */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(", ")}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}: ${stableStringify(obj[k])}`).join(", ")}}`;
}

/** Encode a handle dict the way the reference does: stable JSON with every `"` replaced by `œ`. */
export function encodeHandle(handle: SourceHandle | TargetHandle): string {
  return stableStringify(handle).replace(/"/g, "œ");
}

export function decodeHandle<T = SourceHandle | TargetHandle>(s: string): T | null {
  try {
    return JSON.parse(s.replace(/œ/g, '"')) as T;
  } catch {
    return null;
  }
}

export function edgeId(source: string, sourceHandle: string, target: string, targetHandle: string): string {
  return `reactflow__edge-${source}${sourceHandle}-${target}${targetHandle}`;
}

export function isTemplateField(v: unknown): v is TemplateField {
  return !!v && typeof v === "object" && !Array.isArray(v);
}

export function templateFields(node: FrontendNode): [string, TemplateField][] {
  const out: [string, TemplateField][] = [];
  const order = node.field_order ?? [];
  const seen = new Set<string>();
  for (const name of order) {
    const f = node.template[name];
    if (isTemplateField(f)) {
      out.push([name, f]);
      seen.add(name);
    }
  }
  for (const [name, f] of Object.entries(node.template)) {
    if (name === "_type" || seen.has(name) || !isTemplateField(f)) continue;
    out.push([name, f]);
  }
  return out;
}

export function visibleOutputs(node: FrontendNode) {
  return (node.outputs ?? []).filter((o) => !o.hidden);
}

/** The source handle dict for an output of a node. */
export function sourceHandleFor(node: FlowNode, outputName: string): SourceHandle | null {
  const out = (node.data.node.outputs ?? []).find((o) => o.name === outputName);
  if (!out) return null;
  const types = out.selected && out.types.includes(out.selected) ? [out.selected] : out.types;
  return { dataType: node.data.type, id: node.id, name: out.name, output_types: [...types] };
}

/** The target handle dict for a template field of a node. */
export function targetHandleFor(node: FlowNode, fieldName: string): TargetHandle | null {
  const f = node.data.node.template?.[fieldName];
  if (!isTemplateField(f) || !fieldHasHandle(f)) return null;
  const proxy = f.proxy as TargetHandle["proxy"] | undefined;
  return { fieldName, id: node.id, inputTypes: f.input_types ? [...f.input_types] : null, type: f.type, ...(proxy ? { proxy } : {}) };
}

export function deepClone<T>(v: T): T {
  return typeof structuredClone === "function" ? structuredClone(v) : JSON.parse(JSON.stringify(v));
}

/** A new genericNode from a catalog entry (component key + frontend node). */
export function createNode(key: string, catalogNode: FrontendNode, position: { x: number; y: number }, taken?: Set<string>): FlowNode {
  const id = newNodeId(key.replace(/\s+/g, ""), taken);
  const node = deepClone(catalogNode);
  return {
    id,
    type: "genericNode",
    position: { x: Math.round(position.x), y: Math.round(position.y) },
    data: { id, type: key, node, showNode: true },
  };
}

export function createNote(position: { x: number; y: number }, text = "", taken?: Set<string>): FlowNode {
  const id = newNodeId("note", taken);
  return {
    id,
    type: "noteNode",
    position: { x: Math.round(position.x), y: Math.round(position.y) },
    data: {
      id,
      type: "note",
      node: { description: text, display_name: "", documentation: "", template: { backgroundColor: "amber" } as never },
    },
  };
}

export interface ConnectionRequest {
  source: string;
  sourceHandle: string;
  target: string;
  targetHandle: string;
}

export type ConnectResult = { ok: true; edge: FlowEdge; replaced: string[] } | { ok: false; reason: string };

/**
 * Check a connection and build its edge. Rules: no self-connection, output types must meet the field's input
 * types (aliases allowed), a field that is not a list takes one edge (a new one replaces the old one).
 */
export function connect(nodes: FlowNode[], edges: FlowEdge[], c: ConnectionRequest): ConnectResult {
  if (c.source === c.target) return { ok: false, reason: "A component cannot connect to itself." };
  const src = nodes.find((n) => n.id === c.source);
  const tgt = nodes.find((n) => n.id === c.target);
  if (!src || !tgt) return { ok: false, reason: "The component no longer exists." };
  const sh = decodeHandle<SourceHandle>(c.sourceHandle);
  const th = decodeHandle<TargetHandle>(c.targetHandle);
  if (!sh || !th) return { ok: false, reason: "Unknown connection point." };
  const sourceHandle = sourceHandleFor(src, sh.name);
  const targetHandle = targetHandleFor(tgt, th.fieldName);
  if (!sourceHandle || !targetHandle) return { ok: false, reason: "Unknown connection point." };
  if (!typesCompatible(sourceHandle.output_types, targetHandle.inputTypes)) {
    return {
      ok: false,
      reason: `${sourceHandle.output_types.join(" / ")} cannot connect to a field that accepts ${(targetHandle.inputTypes ?? []).join(", ") || "nothing"}.`,
    };
  }
  const sStr = encodeHandle(sourceHandle);
  const tStr = encodeHandle(targetHandle);
  const id = edgeId(src.id, sStr, tgt.id, tStr);
  if (edges.some((e) => e.id === id)) return { ok: false, reason: "These are already connected." };
  const field = tgt.data.node.template[th.fieldName] as TemplateField;
  const replaced = field.list
    ? []
    : edges.filter((e) => e.target === tgt.id && e.data?.targetHandle?.fieldName === th.fieldName).map((e) => e.id);
  const edge: FlowEdge = {
    id,
    source: src.id,
    target: tgt.id,
    sourceHandle: sStr,
    targetHandle: tStr,
    data: { sourceHandle, targetHandle },
  };
  return { ok: true, edge, replaced };
}

/** Whether a (proposed) connection is valid, for live feedback while dragging. */
export function isValidConnection(nodes: FlowNode[], c: Partial<ConnectionRequest>): boolean {
  if (!c.source || !c.target || !c.sourceHandle || !c.targetHandle || c.source === c.target) return false;
  const sh = decodeHandle<SourceHandle>(c.sourceHandle);
  const th = decodeHandle<TargetHandle>(c.targetHandle);
  if (!sh || !th || !("output_types" in sh) || !("fieldName" in th)) return false;
  const tgt = nodes.find((n) => n.id === c.target);
  const src = nodes.find((n) => n.id === c.source);
  if (!tgt || !src) return false;
  const s = sourceHandleFor(src, sh.name);
  const t = targetHandleFor(tgt, th.fieldName);
  return !!s && !!t && typesCompatible(s.output_types, t.inputTypes);
}

export function removeNodes(nodes: FlowNode[], edges: FlowEdge[], ids: Iterable<string>) {
  const gone = new Set(ids);
  return {
    nodes: nodes.filter((n) => !gone.has(n.id)),
    edges: edges.filter((e) => !gone.has(e.source) && !gone.has(e.target)),
  };
}

/** Set a template field's value (immutably). */
export function setFieldValue(node: FlowNode, field: string, patch: Partial<TemplateField>): FlowNode {
  const tf = node.data.node.template[field];
  if (!isTemplateField(tf)) return node;
  return {
    ...node,
    data: {
      ...node.data,
      node: { ...node.data.node, template: { ...node.data.node.template, [field]: { ...tf, ...patch } } },
    },
  };
}

export interface Clipboard {
  nodes: FlowNode[];
  edges: FlowEdge[];
}

export function copySelection(nodes: FlowNode[], edges: FlowEdge[], ids: Iterable<string>): Clipboard {
  const set = new Set(ids);
  return {
    nodes: deepClone(nodes.filter((n) => set.has(n.id))).map(stripNodeUi),
    edges: deepClone(edges.filter((e) => set.has(e.source) && set.has(e.target))).map(stripEdgeUi),
  };
}

/** Paste a clipboard: fresh ids, offset positions, edges between pasted nodes re-encoded. */
export function pasteClipboard(clip: Clipboard, existing: FlowNode[], offset: { x: number; y: number }): Clipboard {
  const taken = new Set(existing.map((n) => n.id));
  const map = new Map<string, string>();
  const nodes = clip.nodes.map((n) => {
    const key = n.type === "noteNode" ? "note" : n.data.type.replace(/\s+/g, "");
    const id = newNodeId(key, taken);
    taken.add(id);
    map.set(n.id, id);
    const copy = deepClone(n);
    return { ...copy, id, selected: true, position: { x: n.position.x + offset.x, y: n.position.y + offset.y }, data: { ...copy.data, id } };
  });
  const edges: FlowEdge[] = [];
  for (const e of clip.edges) {
    const s = map.get(e.source);
    const t = map.get(e.target);
    if (!s || !t) continue;
    const sourceHandle = { ...e.data.sourceHandle, id: s };
    const targetHandle = { ...e.data.targetHandle, id: t };
    const sStr = encodeHandle(sourceHandle);
    const tStr = encodeHandle(targetHandle);
    edges.push({ id: edgeId(s, sStr, t, tStr), source: s, target: t, sourceHandle: sStr, targetHandle: tStr, data: { sourceHandle, targetHandle } });
  }
  return { nodes, edges };
}

const NODE_UI_KEYS = ["selected", "dragging", "resizing", "positionAbsolute", "internals"];

export function stripNodeUi(n: FlowNode): FlowNode {
  const out: FlowNode = { ...n };
  for (const k of NODE_UI_KEYS) delete out[k];
  return out;
}

export function stripEdgeUi(e: FlowEdge): FlowEdge {
  const { selected: _s, animated: _a, className: _c, style: _st, type: _t, ...rest } = e as FlowEdge & { style?: unknown; type?: unknown };
  return rest as FlowEdge;
}

/** Editor state to `flow.data` in the reference's export format. */
export function toFlowData(nodes: FlowNode[], edges: FlowEdge[], viewport?: Viewport): FlowData {
  return {
    nodes: nodes.map(stripNodeUi),
    edges: edges.map(stripEdgeUi),
    viewport: viewport ?? { x: 0, y: 0, zoom: 1 },
  };
}

/**
 * `flow.data` (ours, the reference's, or a hand-written one) to editor state: nodes typed, handle dicts and
 * strings both present, edges whose endpoints are missing dropped.
 */
export function fromFlowData(data: Partial<FlowData> | null | undefined): { nodes: FlowNode[]; edges: FlowEdge[]; viewport?: Viewport } {
  const nodes: FlowNode[] = [];
  for (const raw of data?.nodes ?? []) {
    if (!raw || typeof raw !== "object" || !raw.id) continue;
    const isNote = raw.type === "noteNode" || raw.data?.type === "note";
    const n: FlowNode = {
      ...raw,
      type: isNote ? "noteNode" : "genericNode",
      position: raw.position ?? { x: 0, y: 0 },
      data: { ...(raw.data ?? {}), id: raw.id, type: raw.data?.type ?? (isNote ? "note" : "Unknown"), node: raw.data?.node ?? { template: {} } },
    } as FlowNode;
    if (!n.data.node.template) n.data.node = { ...n.data.node, template: {} };
    nodes.push(n);
  }
  const ids = new Set(nodes.map((n) => n.id));
  const edges: FlowEdge[] = [];
  for (const raw of data?.edges ?? []) {
    if (!raw || !ids.has(raw.source) || !ids.has(raw.target)) continue;
    const sourceHandle = raw.data?.sourceHandle ?? (raw.sourceHandle ? decodeHandle<SourceHandle>(raw.sourceHandle) : null);
    const targetHandle = raw.data?.targetHandle ?? (raw.targetHandle ? decodeHandle<TargetHandle>(raw.targetHandle) : null);
    if (!sourceHandle || !targetHandle) continue;
    const sStr = encodeHandle(sourceHandle);
    const tStr = encodeHandle(targetHandle);
    edges.push({
      ...stripEdgeUi(raw),
      id: raw.id || edgeId(raw.source, sStr, raw.target, tStr),
      sourceHandle: sStr,
      targetHandle: tStr,
      data: { ...(raw.data ?? {}), sourceHandle, targetHandle },
    });
  }
  return { nodes, edges, viewport: data?.viewport };
}

/** Component nodes whose key is not in the catalog (they cannot run here). */
export function unknownComponents(nodes: FlowNode[], known: Set<string>): string[] {
  return [...new Set(nodes.filter((n) => n.type === "genericNode" && !n.data.node?.flow && !known.has(n.data.type)).map((n) => n.data.type))];
}

/** The first type of a handle, canonicalised (for its colour). */
export function primaryType(types: readonly string[] | null | undefined): string | undefined {
  return types?.length ? canonicalType(types[0]) : undefined;
}

/** Ids of nodes upstream of (and including) `id`: what "run up to this component" builds. */
export function upstreamOf(edges: FlowEdge[], id: string): Set<string> {
  const seen = new Set([id]);
  const stack = [id];
  while (stack.length) {
    const cur = stack.pop()!;
    for (const e of edges) if (e.target === cur && !seen.has(e.source)) { seen.add(e.source); stack.push(e.source); }
  }
  return seen;
}

/**
 * The first spot at or after `p` (moving right, then down) where a node of `size` overlaps no existing node
 * (keyboard adds land next to what is there, never on top of it).
 */
export function freePosition(p: { x: number; y: number }, nodes: FlowNode[], size = { width: 300, height: 260 }, gap = 40) {
  const boxes = nodes.map((n) => ({
    x: n.position.x,
    y: n.position.y,
    w: n.measured?.width ?? n.width ?? 300,
    h: n.measured?.height ?? n.height ?? 260,
  }));
  const hits = (x: number, y: number) =>
    boxes.some((b) => x < b.x + b.w + gap && x + size.width + gap > b.x && y < b.y + b.h + gap && y + size.height + gap > b.y);
  for (let row = 0; row < 20; row++) {
    for (let col = 0; col < 20; col++) {
      const x = p.x + col * (size.width + gap);
      const y = p.y + row * (size.height + gap);
      if (!hits(x, y)) return { x, y };
    }
  }
  return p;
}

/**
 * Tweaks for the API snippet: per component, the current values of its visible, non-advanced, plain fields
 * (text, numbers, switches, choices). Secrets, handle-only fields and the Chat Input's message (the request's
 * `input_value` sets it; both at once is a 400) are left out.
 */
export function defaultTweaks(nodes: FlowNode[]): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const n of nodes) {
    if (n.type !== "genericNode") continue;
    const fields: Record<string, unknown> = {};
    for (const [name, f] of templateFields(n.data.node)) {
      if (f.show === false || f.advanced || f.password || f.load_from_db || f.type === "other" || f.type === "code") continue;
      if (n.data.type === "ChatInput" && name === "input_value") continue;
      const v = f.value;
      if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") fields[name] = v;
    }
    if (Object.keys(fields).length) out[n.id] = fields;
  }
  return out;
}
