import { describe, expect, it } from "vitest";
import catalog from "./__fixtures__/catalog.json";
import { connect, createNode, encodeHandle, sourceHandleFor, targetHandleFor } from "./flow";
import { keyCandidates, originLabel } from "./keyconnect";
import type { FlowNode, FrontendNode } from "./types";

const cat = catalog as unknown as Record<string, Record<string, FrontendNode>>;

function three(): FlowNode[] {
  return [
    createNode("ChatInput", cat.input_output.ChatInput, { x: 0, y: 0 }),
    createNode("ChatOutput", cat.input_output.ChatOutput, { x: 400, y: 0 }),
    createNode("ChatOutput", cat.input_output.ChatOutput, { x: 800, y: 0 }),
  ];
}

describe("keyboard connect", () => {
  it("lists every input of the other nodes, accepted ones first, refusals with the canvas's reason", () => {
    const [a, b, c] = three();
    const origin = { nodeId: a.id, handleType: "source" as const, handleId: encodeHandle(sourceHandleFor(a, "message")!) };
    const list = keyCandidates([a, b, c], [], origin);
    expect(list.every((x) => x.nodeId !== a.id)).toBe(true);
    const ok = list.filter((x) => !x.refusal);
    expect(ok.map((x) => [x.nodeId, x.request.target])).toContainEqual([b.id, b.id]);
    expect(ok.some((x) => x.nodeId === c.id)).toBe(true);
    // accepted first
    const firstRefused = list.findIndex((x) => x.refusal);
    if (firstRefused >= 0) expect(list.slice(firstRefused).every((x) => x.refusal)).toBe(true);
    // a chosen candidate connects exactly as a drop would
    const pick = ok.find((x) => x.nodeId === b.id)!;
    const r = connect([a, b, c], [], pick.request);
    expect(r.ok).toBe(true);
    // once connected, the same choice is refused with the drop's reason
    if (!r.ok) throw new Error("fixture");
    const again = keyCandidates([a, b, c], [r.edge], origin).find((x) => x.request.targetHandle === pick.request.targetHandle)!;
    expect(again.refusal).toBe("These are already connected.");
    expect(originLabel([a, b, c], origin)).toMatch(/^output .+ of Chat Input$/);
  });

  it("from an input lists the outputs of the other nodes", () => {
    const [a, b] = three();
    const origin = { nodeId: b.id, handleType: "target" as const, handleId: encodeHandle(targetHandleFor(b, "input_value")!) };
    const list = keyCandidates([a, b], [], origin);
    expect(list.length).toBeGreaterThan(0);
    expect(list[0].nodeId).toBe(a.id);
    expect(list[0].refusal).toBeNull();
    expect(list[0].request.source).toBe(a.id);
    expect(list[0].request.target).toBe(b.id);
  });

  it("says why an incompatible input refuses", () => {
    const [a, b] = three();
    // a field that takes no Message: pretend b's input only accepts JSON
    const t = b.data.node.template.input_value as { input_types?: string[] };
    t.input_types = ["JSON"];
    const origin = { nodeId: a.id, handleType: "source" as const, handleId: encodeHandle(sourceHandleFor(a, "message")!) };
    const refused = keyCandidates([a, b], [], origin).find((x) => x.request.target === b.id && x.request.targetHandle.includes("input_value"))!;
    expect(refused.refusal).toMatch(/cannot connect to a field that accepts JSON/);
  });
});
