import { describe, expect, it } from "vitest";
import { overlapping, resolveOverlaps } from "./layout";
import type { FlowNode } from "./types";

const n = (id: string, x: number, y: number, w = 300, h = 200): FlowNode =>
  ({ id, type: "genericNode", position: { x, y }, measured: { width: w, height: h }, data: { id, type: "X", node: { template: {} } } }) as FlowNode;

describe("layout repair", () => {
  it("leaves a clean layout alone", () => {
    const nodes = [n("a", 0, 0), n("b", 400, 0)];
    expect(resolveOverlaps(nodes)).toBe(nodes);
  });
  it("moves an overlapping component below its neighbour", () => {
    const nodes = [n("a", 0, 0), n("b", 100, 50), n("c", 120, 260)];
    const out = resolveOverlaps(nodes);
    expect(overlapping(out)).toEqual([]);
    expect(out[0].position).toEqual({ x: 0, y: 0 });
    expect(out[1].position.x).toBe(100);
    expect(out[1].position.y).toBeGreaterThanOrEqual(224);
  });
});
