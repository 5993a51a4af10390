import { describe, expect, it } from "vitest";
import { asConflict, compareGraphs, diffSummary, type VersionDiff } from "./versions";

const node = (id: string, value: string) => ({ id, type: "genericNode", position: { x: 0, y: 0 }, data: { node: { display_name: id, template: { v: { value } } } } });

describe("versions", () => {
  it("reads a conflict body", () => {
    expect(asConflict({ detail: { code: "flow_version_conflict", message: "m" } })?.message).toBe("m");
    expect(asConflict({ detail: "Name must be unique" })).toBeNull();
  });
  it("compares two graphs by node", () => {
    const theirs = { nodes: [node("A", "1"), node("B", "1")], edges: [] };
    const mine = { nodes: [node("A", "2"), node("C", "1")], edges: [] };
    expect(compareGraphs(theirs as never, mine as never)).toEqual({ onlyTheirs: ["B"], onlyMine: ["C"], different: ["A"] });
  });
  it("summarises a diff", () => {
    const diff = { added: [{ id: "x" }], removed: [], moved: [], changed: [], edges: { added: [{ source: "a", target: "b" }], removed: [] }, unchanged: false } as unknown as VersionDiff;
    expect(diffSummary(diff)).toBe("1 added, 1 connection");
  });
});
