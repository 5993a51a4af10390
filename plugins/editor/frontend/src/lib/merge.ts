// Three-way merge of flow graphs for the conflict dialog (docs/versions.md, issue 31).
//
// A save refused with 409 carries the stored graph ("theirs": what someone else saved) and the refused one
// ("mine"); the editor keeps the graph both started from ("base": what it loaded or last saved). Every
// difference between mine and theirs becomes one change, at the smallest unit that can be picked on its
// own: a node's presence (added or removed), its position (moved), one template field, one other member
// of the node, and an edge's presence. Each change says who made it since the base (mine, theirs or both)
// and carries a default pick: the side that changed it, and mine when both did. `applyMerge` starts from
// theirs and takes mine for every change picked "mine", so with the default picks both people's
// non-overlapping work is kept. Edges attached to a node whose presence is a change follow that node's pick.
import type { FlowData, FlowEdge, FlowNode } from "./types";

export type Side = "mine" | "theirs";
export type ChangeKind = "node" | "position" | "field" | "member" | "edge";

export interface MergeChange {
  /** unique per change; the key of a pick */
  key: string;
  kind: ChangeKind;
  /** who changed it since the base */
  by: Side | "both";
  /** the node's id (node, position, field, member) */
  nodeId?: string;
  /** the node's display name, "a → b" for an edge */
  label: string;
  /** the field's or member's name */
  name?: string;
  /** what each side holds, for display ("absent" when it does not have it) */
  mine: string;
  theirs: string;
  /** the default pick */
  pick: Side;
  /** edges attached to a node change (they follow its pick) */
  edges?: number;
}

type Json = unknown;
const VOLATILE = new Set(["selected", "dragging", "positionAbsolute", "measured", "resizing"]);
const ABSENT = "absent";

/** JSON with sorted keys: equal values compare equal as strings. */
export function stable(value: Json): string {
  if (value === undefined) return "undefined";
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(stable).join(",")}]`;
  const obj = value as Record<string, Json>;
  return `{${Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${stable(obj[k])}`)
    .join(",")}}`;
}

const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function nodesOf(data: FlowData | null | undefined): Map<string, FlowNode> {
  return new Map((data?.nodes ?? []).map((n) => [String(n.id), n]));
}

export function edgeKey(e: FlowEdge): string {
  return [e.source, e.sourceHandle ?? "", e.target, e.targetHandle ?? ""].join("\u0001");
}

function edgesOf(data: FlowData | null | undefined): Map<string, FlowEdge> {
  return new Map((data?.edges ?? []).map((e) => [edgeKey(e), e]));
}

function inner(node: FlowNode | undefined): Record<string, Json> {
  const data = (node?.data ?? {}) as Record<string, Json>;
  const n = data.node;
  return n && typeof n === "object" ? (n as Record<string, Json>) : {};
}

function template(node: FlowNode | undefined): Record<string, Json> {
  const t = inner(node).template;
  return t && typeof t === "object" ? (t as Record<string, Json>) : {};
}

/** A node without what the canvas changes by itself (selection, drag state, measured size). */
function nodeBody(node: FlowNode | undefined): string {
  if (!node) return ABSENT;
  const rest = Object.fromEntries(Object.entries(node).filter(([k]) => !VOLATILE.has(k)));
  return stable(rest);
}

function nameOf(node: FlowNode | undefined, id: string): string {
  const n = inner(node);
  return String(n.display_name ?? (node?.data as { type?: string } | undefined)?.type ?? id);
}

/** Who changed a unit since the base, or null when mine and theirs agree. */
function who(base: string, mine: string, theirs: string): Side | "both" | null {
  if (mine === theirs) return null;
  if (mine === base) return "theirs";
  if (theirs === base) return "mine";
  return "both";
}

function shown(field: Json): string {
  if (field === undefined) return ABSENT;
  if (field && typeof field === "object" && "value" in (field as object)) {
    const f = field as { value?: Json; password?: boolean };
    if (f.password && f.value) return "••••••";
    return short(f.value);
  }
  return short(field);
}

function short(value: Json): string {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? null);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

const pos = (n: FlowNode | undefined) =>
  n?.position ? stable({ x: Math.round(n.position.x), y: Math.round(n.position.y) }) : ABSENT;
const posText = (n: FlowNode | undefined) => (n?.position ? `(${Math.round(n.position.x)}, ${Math.round(n.position.y)})` : ABSENT);

/** Members of a node other than its template, position and volatile state: `data.node.<k>`, `data.<k>`, `<k>`. */
function members(node: FlowNode | undefined): Map<string, Json> {
  const out = new Map<string, Json>();
  if (!node) return out;
  for (const [k, v] of Object.entries(node)) if (!VOLATILE.has(k) && !["id", "data", "position"].includes(k)) out.set(k, v);
  const data = (node.data ?? {}) as Record<string, Json>;
  for (const [k, v] of Object.entries(data)) if (k !== "node") out.set(`data.${k}`, v);
  for (const [k, v] of Object.entries(inner(node))) if (k !== "template") out.set(`data.node.${k}`, v);
  return out;
}

function setMember(node: FlowNode, path: string, value: Json) {
  const parts = path.split(".");
  let target = node as unknown as Record<string, Json>;
  for (const part of parts.slice(0, -1)) {
    if (!target[part] || typeof target[part] !== "object") target[part] = {};
    target = target[part] as Record<string, Json>;
  }
  const last = parts[parts.length - 1];
  if (value === undefined) delete target[last];
  else target[last] = clone(value);
}

/** Every difference between mine and theirs, with who made it since base and the default pick. */
export function mergeChanges(base: FlowData | null | undefined, mine: FlowData, theirs: FlowData): MergeChange[] {
  const [b, m, t] = [nodesOf(base), nodesOf(mine), nodesOf(theirs)];
  const out: MergeChange[] = [];
  const nodeChanged = new Set<string>();
  const ids = [...new Set([...t.keys(), ...m.keys()])];
  for (const id of ids) {
    const [bn, mn, tn] = [b.get(id), m.get(id), t.get(id)];
    const label = nameOf(mn ?? tn ?? bn, id);
    if (!mn || !tn) {
      // present on one side only: added by that side, or removed by the other
      let by = who(bn ? "present" : ABSENT, mn ? "present" : ABSENT, tn ? "present" : ABSENT) ?? "both";
      // a node removed on one side but edited on the other is a conflict
      const kept = mn ?? tn;
      if (bn && nodeBody(kept) !== nodeBody(bn)) by = "both";
      out.push({ key: `node:${id}`, kind: "node", by, nodeId: id, label, mine: mn ? "present" : ABSENT, theirs: tn ? "present" : ABSENT, pick: by === "theirs" ? "theirs" : "mine" });
      nodeChanged.add(id);
      continue;
    }
    const unit = (key: string, kind: ChangeKind, name: string | undefined, bv: string, mv: string, tv: string, ms: string, ts: string) => {
      const by = who(bv, mv, tv);
      if (by) out.push({ key, kind, by, nodeId: id, label, name, mine: ms, theirs: ts, pick: by === "theirs" ? "theirs" : "mine" });
    };
    unit(`position:${id}`, "position", undefined, pos(bn), pos(mn), pos(tn), posText(mn), posText(tn));
    const [bt, mt, tt] = [template(bn), template(mn), template(tn)];
    for (const field of [...new Set([...Object.keys(tt), ...Object.keys(mt)])].sort()) {
      const bv = bn ? stable(bt[field]) : ABSENT;
      unit(`field:${id}:${field}`, "field", field, bv, stable(mt[field]), stable(tt[field]), shown(mt[field]), shown(tt[field]));
    }
    const [bm, mm, tm] = [members(bn), members(mn), members(tn)];
    for (const path of [...new Set([...tm.keys(), ...mm.keys()])].sort()) {
      const bv = bn ? stable(bm.get(path)) : ABSENT;
      const [mv, tv] = [mm.get(path), tm.get(path)];
      unit(`member:${id}:${path}`, "member", path.replace(/^data\.(node\.)?/, ""), bv, stable(mv), stable(tv), mv === undefined ? ABSENT : short(mv), tv === undefined ? ABSENT : short(tv));
    }
  }
  const [be, me, te] = [edgesOf(base), edgesOf(mine), edgesOf(theirs)];
  const names = new Map([...b, ...t, ...m].map(([id, n]) => [id, nameOf(n, id)]));
  for (const key of [...new Set([...te.keys(), ...me.keys()])]) {
    const [inMine, inTheirs] = [me.has(key), te.has(key)];
    if (inMine === inTheirs) continue;
    const edge = (me.get(key) ?? te.get(key)) as FlowEdge;
    const attached = [edge.source, edge.target].find((n) => nodeChanged.has(String(n)));
    if (attached !== undefined) {
      const owner = out.find((c) => c.key === `node:${attached}`);
      if (owner) owner.edges = (owner.edges ?? 0) + 1;
      continue;
    }
    const by = who(be.has(key) ? "present" : ABSENT, inMine ? "present" : ABSENT, inTheirs ? "present" : ABSENT) ?? "both";
    const label = `${names.get(String(edge.source)) ?? edge.source} → ${names.get(String(edge.target)) ?? edge.target}`;
    out.push({ key: `edge:${key}`, kind: "edge", by, label, mine: inMine ? "present" : ABSENT, theirs: inTheirs ? "present" : ABSENT, pick: by === "theirs" ? "theirs" : "mine" });
  }
  return out;
}

/** The merged graph: theirs, with mine taken for every change picked "mine" (`picks` overrides the defaults). */
export function applyMerge(mine: FlowData, theirs: FlowData, changes: MergeChange[], picks: Record<string, Side> = {}): FlowData {
  const merged = clone(theirs);
  const mineNodes = nodesOf(mine);
  const mineEdges = edgesOf(mine);
  const pickOf = (c: MergeChange) => picks[c.key] ?? c.pick;
  let nodes = merged.nodes ?? [];
  let edges = merged.edges ?? [];
  const find = (id: string) => nodes.find((n) => String(n.id) === id);
  const followers = new Map<string, Side>(); // node id -> pick, for the edges attached to it
  for (const change of changes) {
    const side = pickOf(change);
    if (change.kind === "node") followers.set(change.nodeId as string, side);
    if (side === "theirs") continue;
    const id = change.nodeId as string;
    if (change.kind === "node") {
      const mn = mineNodes.get(id);
      nodes = nodes.filter((n) => String(n.id) !== id);
      if (mn) nodes.push(clone(mn));
    } else if (change.kind === "position") {
      const target = find(id);
      if (target) target.position = clone(mineNodes.get(id)?.position ?? target.position);
    } else if (change.kind === "field") {
      const target = find(id);
      const field = change.key.slice(`field:${id}:`.length);
      if (target) setMember(target, `data.node.template.${field}`, template(mineNodes.get(id))[field]);
    } else if (change.kind === "member") {
      const target = find(id);
      const path = change.key.slice(`member:${id}:`.length);
      if (target) setMember(target, path, members(mineNodes.get(id)).get(path));
    } else if (change.kind === "edge") {
      const key = change.key.slice("edge:".length);
      const me = mineEdges.get(key);
      edges = edges.filter((e) => edgeKey(e) !== key);
      if (me) edges.push(clone(me));
    }
  }
  // edges attached to a node whose presence was picked follow that pick
  for (const [id, side] of followers) {
    if (side !== "mine") continue;
    edges = edges.filter((e) => String(e.source) !== id && String(e.target) !== id);
    for (const e of mineEdges.values()) if (String(e.source) === id || String(e.target) === id) edges.push(clone(e));
  }
  const present = new Set(nodes.map((n) => String(n.id)));
  const seen = new Set<string>();
  edges = edges.filter((e) => {
    const key = edgeKey(e);
    if (seen.has(key) || !present.has(String(e.source)) || !present.has(String(e.target))) return false;
    seen.add(key);
    return true;
  });
  return { ...merged, nodes, edges, viewport: mine.viewport ?? merged.viewport };
}

/** One line for a change: "Chat Input: field input_value changed", "Prompt: added". */
export function describeChange(change: MergeChange): string {
  const whose = change.by === "both" ? "changed on both sides" : change.by === "mine" ? "changed by you" : "changed by them";
  switch (change.kind) {
    case "node": {
      const edges = change.edges ? ` (and ${change.edges} connection${change.edges === 1 ? "" : "s"})` : "";
      if (change.by === "both") return `${change.label}: removed on one side, edited on the other${edges}`;
      const has = change.by === "mine" ? change.mine !== ABSENT : change.theirs !== ABSENT;
      return `${change.label}: ${has ? "added" : "removed"} ${change.by === "mine" ? "by you" : "by them"}${edges}`;
    }
    case "position":
      return `${change.label}: moved (${whose})`;
    case "field":
      return `${change.label} › ${change.name}: ${whose}`;
    case "member":
      return `${change.label} › ${change.name}: ${whose}`;
    case "edge":
      return `Connection ${change.label}: ${change.mine === ABSENT ? "only in theirs" : "only in yours"} (${whose})`;
  }
}
