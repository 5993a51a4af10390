// Layout repair on load: components drawn over each other (starters and exports positioned for another
// editor's node sizes) are moved apart, using the sizes the canvas measured.
import type { FlowNode } from "./types";

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

function box(n: FlowNode): Box | null {
  const w = n.measured?.width ?? n.width;
  const h = n.measured?.height ?? n.height;
  if (!w || !h) return null;
  return { x: n.position.x, y: n.position.y, w, h };
}

function overlaps(a: Box, b: Box, gap: number): boolean {
  return a.x < b.x + b.w + gap && b.x < a.x + a.w + gap && a.y < b.y + b.h + gap && b.y < a.y + a.h + gap;
}

/** The pairs of components whose measured boxes overlap (gap 0): what a user sees drawn over each other. */
export function overlapping(nodes: FlowNode[]): [string, string][] {
  const boxes = nodes.filter((n) => n.type === "genericNode").map((n) => [n.id, box(n)] as const);
  const out: [string, string][] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, b] = [boxes[i][1], boxes[j][1]];
      if (a && b && overlaps(a, b, -1)) out.push([boxes[i][0], boxes[j][0]]);
    }
  return out;
}

/**
 * Move overlapping components apart: left to right, top to bottom, a component that overlaps one already placed
 * goes below it (columns are kept). Returns the same array when nothing overlaps; notes are left where they are.
 */
export function resolveOverlaps(nodes: FlowNode[], gap = 24): FlowNode[] {
  if (!overlapping(nodes).length) return nodes;
  const order = nodes
    .map((n, i) => ({ n, i, b: n.type === "genericNode" ? box(n) : null }))
    .filter((e): e is { n: FlowNode; i: number; b: Box } => e.b !== null)
    .sort((p, q) => p.b.x - q.b.x || p.b.y - q.b.y);
  const placed: Box[] = [];
  const moved = new Map<number, { x: number; y: number }>();
  for (const e of order) {
    const b = { ...e.b };
    for (let guard = 0; guard < 500; guard++) {
      const hit = placed.find((p) => overlaps(p, b, gap - 1));
      if (!hit) break;
      b.y = hit.y + hit.h + gap;
    }
    placed.push(b);
    if (b.y !== e.b.y) moved.set(e.i, { x: b.x, y: Math.round(b.y) });
  }
  if (!moved.size) return nodes;
  return nodes.map((n, i) => (moved.has(i) ? { ...n, position: moved.get(i)! } : n));
}
