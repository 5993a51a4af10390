import { describe, expect, it } from "vitest";
import catalog from "./__fixtures__/catalog.json";
import { createNode, removeNodes } from "./flow";
import { History } from "./history";
import type { FlowEdge, FlowNode, FrontendNode } from "./types";

describe("History", () => {
  it("undoes and redoes in order", () => {
    const h = new History<number>();
    let state = 0;
    for (const next of [1, 2, 3]) {
      h.push(state);
      state = next;
    }
    expect(h.canUndo).toBe(true);
    state = h.undo(state)!;
    expect(state).toBe(2);
    state = h.undo(state)!;
    expect(state).toBe(1);
    expect(h.canRedo).toBe(true);
    state = h.redo(state)!;
    expect(state).toBe(2);
    state = h.redo(state)!;
    expect(state).toBe(3);
    expect(h.redo(state)).toBeNull();
  });
  it("a new change clears the redo stack", () => {
    const h = new History<string>();
    h.push("a");
    const back = h.undo("b")!;
    expect(back).toBe("a");
    h.push(back);
    expect(h.canRedo).toBe(false);
    expect(h.undo("c")).toBe("a");
  });
  it("is bounded", () => {
    const h = new History<number>(3);
    for (let i = 0; i < 10; i++) h.push(i);
    let s = 10;
    const seen: number[] = [];
    for (let r = h.undo(s); r !== null; r = h.undo(s)) {
      seen.push(r);
      s = r;
    }
    expect(seen).toEqual([9, 8, 7]);
  });
  it("undo of empty history is a no-op", () => {
    const h = new History<number>();
    expect(h.undo(1)).toBeNull();
    expect(h.canUndo).toBe(false);
  });
  it("restores graph snapshots exactly (add, delete, undo, redo)", () => {
    const cat = catalog as unknown as Record<string, Record<string, FrontendNode>>;
    type Snap = { nodes: FlowNode[]; edges: FlowEdge[] };
    const h = new History<Snap>();
    let s: Snap = { nodes: [], edges: [] };
    const a = createNode("ChatInput", cat.input_output.ChatInput, { x: 0, y: 0 });
    h.push(s);
    s = { nodes: [a], edges: [] };
    h.push(s);
    s = removeNodes(s.nodes, s.edges, [a.id]);
    expect(s.nodes).toHaveLength(0);
    s = h.undo(s)!;
    expect(s.nodes[0]).toBe(a);
    s = h.undo(s)!;
    expect(s.nodes).toHaveLength(0);
    s = h.redo(s)!;
    expect(s.nodes).toEqual([a]);
  });
});
