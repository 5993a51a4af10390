import { describe, expect, it } from "vitest";
import { applyEvents, describeAffected } from "./extensions";

const FLOW = "f-1";

describe("extension events in the editor", () => {
  it("moves the cursor and reports this flow's nodes only", () => {
    const out = applyEvents(
      { cursor: 10, generation: 1 },
      {
        settled: true,
        generation: 2,
        events: [
          {
            type: "flow_migration",
            timestamp: 12.5,
            payload: {
              bundle: "alpha",
              flows: [
                { flow_id: FLOW, nodes: [{ id: "A-1", type: "ExtA", change: "changed" }, { id: "B-1", type: "ExtB", change: "removed" }] },
                { flow_id: "other", nodes: [{ id: "C-1", type: "ExtC", change: "removed" }] },
              ],
            },
          },
        ],
      },
      FLOW,
    );
    expect(out.state).toEqual({ cursor: 12.5, generation: 2 });
    expect(out.refreshCatalog).toBe(true);
    expect(out.affected.map((n) => n.id)).toEqual(["A-1", "B-1"]);
    expect(describeAffected(out.affected)).toBe("A-1 (ExtA, changed), B-1 (ExtB, removed)");
  });

  it("refreshes the palette when the generation moved, even without an event of the caller", () => {
    const out = applyEvents({ cursor: 5, generation: 3 }, { settled: true, generation: 4, events: [] }, FLOW);
    expect(out.refreshCatalog).toBe(true);
    expect(out.affected).toEqual([]);
    expect(out.state.cursor).toBe(5);
  });

  it("does nothing on the first answer or when nothing moved", () => {
    expect(applyEvents({ cursor: 5, generation: null }, { settled: true, generation: 4, events: [] }, FLOW).refreshCatalog).toBe(false);
    expect(applyEvents({ cursor: 5, generation: 4 }, { settled: true, generation: 4, events: [] }, FLOW).refreshCatalog).toBe(false);
    const failed = applyEvents(
      { cursor: 5, generation: 4 },
      { settled: true, generation: 4, events: [{ type: "bundle_reload_failed", timestamp: 6, payload: {} }] },
      FLOW,
    );
    expect(failed.refreshCatalog).toBe(false);
    expect(failed.state.cursor).toBe(6);
  });
});
