import { describe, expect, it } from "vitest";
import { applyMerge, describeChange, mergeChanges, stable } from "./merge";
import type { FlowData } from "./types";

const node = (id: string, fields: Record<string, string> = {}, x = 0) => ({
  id,
  type: "genericNode",
  position: { x, y: 0 },
  data: { id, type: id, node: { display_name: id, template: Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { value: v }])) } },
});
const edge = (source: string, target: string) => ({ id: `${source}-${target}`, source, target, sourceHandle: "o", targetHandle: "i" });
const graph = (nodes: ReturnType<typeof node>[], edges: ReturnType<typeof edge>[] = []) => ({ nodes, edges }) as unknown as FlowData;
const copy = (g: FlowData) => JSON.parse(JSON.stringify(g)) as FlowData;
const value = (g: FlowData, id: string, field: string) =>
  (g.nodes.find((n) => n.id === id)?.data as { node: { template: Record<string, { value: string }> } } | undefined)?.node.template[field]?.value;

const base = graph([node("A", { text: "a", model: "m1" }), node("B", { prompt: "p" })], [edge("A", "B")]);

describe("mergeChanges", () => {
  it("finds nothing when both sides agree", () => {
    expect(mergeChanges(base, copy(base), copy(base))).toEqual([]);
  });

  it("keeps both people's changes to different fields by default", () => {
    const mine = copy(base);
    const theirs = copy(base);
    (mine.nodes[0].data as any).node.template.text.value = "mine";
    (theirs.nodes[0].data as any).node.template.model.value = "m2";
    const changes = mergeChanges(base, mine, theirs);
    expect(changes.map((c) => [c.key, c.by, c.pick])).toEqual([
      ["field:A:model", "theirs", "theirs"],
      ["field:A:text", "mine", "mine"],
    ]);
    const merged = applyMerge(mine, theirs, changes);
    expect(value(merged, "A", "text")).toBe("mine");
    expect(value(merged, "A", "model")).toBe("m2");
  });

  it("marks a field changed on both sides and honours the pick", () => {
    const mine = copy(base);
    const theirs = copy(base);
    (mine.nodes[1].data as any).node.template.prompt.value = "mine";
    (theirs.nodes[1].data as any).node.template.prompt.value = "theirs";
    const changes = mergeChanges(base, mine, theirs);
    expect(changes).toHaveLength(1);
    expect(changes[0]).toMatchObject({ kind: "field", by: "both", mine: "mine", theirs: "theirs", pick: "mine" });
    expect(describeChange(changes[0])).toBe("B › prompt: changed on both sides");
    expect(value(applyMerge(mine, theirs, changes), "B", "prompt")).toBe("mine");
    expect(value(applyMerge(mine, theirs, changes, { [changes[0].key]: "theirs" }), "B", "prompt")).toBe("theirs");
  });

  it("adds nodes from both sides, with their edges", () => {
    const mine = copy(base);
    const theirs = copy(base);
    mine.nodes.push(node("C") as never);
    mine.edges.push(edge("B", "C") as never);
    theirs.nodes.push(node("D") as never);
    theirs.edges.push(edge("B", "D") as never);
    const changes = mergeChanges(base, mine, theirs);
    expect(changes.map((c) => [c.key, c.by, c.edges])).toEqual([
      ["node:D", "theirs", 1],
      ["node:C", "mine", 1],
    ]);
    expect(describeChange(changes[0])).toBe("D: added by them (and 1 connection)");
    expect(describeChange(changes[1])).toBe("C: added by you (and 1 connection)");
    const merged = applyMerge(mine, theirs, changes);
    expect(merged.nodes.map((n) => n.id).sort()).toEqual(["A", "B", "C", "D"]);
    expect(merged.edges.map((e) => `${e.source}${e.target}`).sort()).toEqual(["AB", "BC", "BD"]);
    // dropping my node drops its edge too
    const without = applyMerge(mine, theirs, changes, { "node:C": "theirs" });
    expect(without.nodes.map((n) => n.id).sort()).toEqual(["A", "B", "D"]);
    expect(without.edges.map((e) => `${e.source}${e.target}`).sort()).toEqual(["AB", "BD"]);
  });

  it("removes a node one side removed, unless the other edited it (a conflict)", () => {
    const mine = graph([node("A", { text: "a", model: "m1" })]);
    const theirs = copy(base);
    let changes = mergeChanges(base, mine, theirs);
    expect(changes.map((c) => [c.key, c.by, c.pick, c.edges])).toEqual([["node:B", "mine", "mine", 1]]);
    expect(describeChange(changes[0])).toBe("B: removed by you (and 1 connection)");
    let merged = applyMerge(mine, theirs, changes);
    expect(merged.nodes.map((n) => n.id)).toEqual(["A"]);
    expect(merged.edges).toEqual([]);
    // keeping theirs keeps the node and its connection
    merged = applyMerge(mine, theirs, changes, { "node:B": "theirs" });
    expect(merged.edges.map((e) => `${e.source}${e.target}`)).toEqual(["AB"]);

    (theirs.nodes[1].data as any).node.template.prompt.value = "edited";
    changes = mergeChanges(base, mine, theirs);
    expect(changes[0]).toMatchObject({ key: "node:B", by: "both" });
    expect(describeChange(changes[0])).toMatch(/removed on one side, edited on the other/);
  });

  it("moves, renames and edges are changes of their own", () => {
    const mine = copy(base);
    const theirs = copy(base);
    mine.nodes[0].position = { x: 300, y: 40 };
    mine.nodes[0].selected = true; // canvas state is not a change
    (theirs.nodes[1].data as any).node.display_name = "Renamed";
    theirs.edges = [];
    const changes = mergeChanges(base, mine, theirs);
    expect(changes.map((c) => [c.key, c.by])).toEqual([
      ["position:A", "mine"],
      ["member:B:data.node.display_name", "theirs"],
      [`edge:A\u0001o\u0001B\u0001i`, "theirs"],
    ]);
    expect(changes[0]).toMatchObject({ mine: "(300, 40)", theirs: "(0, 0)" });
    const merged = applyMerge(mine, theirs, changes);
    expect(merged.nodes[0].position).toEqual({ x: 300, y: 40 });
    expect((merged.nodes[1].data as any).node.display_name).toBe("Renamed");
    expect(merged.edges).toEqual([]);
    // picking mine for the edge brings it back
    expect(applyMerge(mine, theirs, changes, { [changes[2].key]: "mine" }).edges).toHaveLength(1);
  });

  it("never shows a secret's value", () => {
    const mine = copy(base);
    const theirs = copy(base);
    (mine.nodes[0].data as any).node.template.key = { value: "sk-mine", password: true };
    const [change] = mergeChanges(base, mine, theirs);
    expect(change.mine).not.toContain("sk-mine");
    expect(change.theirs).toBe("absent");
  });

  it("stable JSON ignores key order", () => {
    expect(stable({ b: 1, a: [1, { d: 2, c: 3 }] })).toBe(stable({ a: [1, { c: 3, d: 2 }], b: 1 }));
  });
});
