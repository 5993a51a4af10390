import { describe, expect, it } from "vitest";
import { asConflict, diffSummary, type VersionDiff } from "./versions";

describe("versions", () => {
  it("reads a conflict body", () => {
    expect(asConflict({ detail: { code: "flow_version_conflict", message: "m" } })?.message).toBe("m");
    expect(asConflict({ detail: "Name must be unique" })).toBeNull();
  });
  it("summarises a diff", () => {
    const diff = { added: [{ id: "x" }], removed: [], moved: [], changed: [], edges: { added: [{ source: "a", target: "b" }], removed: [] }, unchanged: false } as unknown as VersionDiff;
    expect(diffSummary(diff)).toBe("1 added, 1 connection");
  });
});
