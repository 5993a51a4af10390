import { describe, expect, it } from "vitest";
import { encodeHandle } from "./flow";
import { fillMissingOutputs, syncEdgeHandles } from "./hydrate";
import type { FlowEdge, FlowNode, FrontendNode } from "./types";

const out = (name: string, types: string[]) => ({ name, display_name: name, types, selected: types[0], method: name });

const catalog: Record<string, FrontendNode> = {
  TypeConverterComponent: {
    template: { output_type: { type: "str", value: "Message" } },
    outputs: [out("message_output", ["Message"])],
  },
  ChatOutput: { template: {}, outputs: [out("message", ["Message"])] },
};

function node(id: string, type: string, outputs: FrontendNode["outputs"], template: FrontendNode["template"] = {}): FlowNode {
  return { id, type: "genericNode", position: { x: 0, y: 0 }, data: { id, type, node: { template, outputs } } };
}

describe("fillMissingOutputs", () => {
  const lookup = (k: string) => catalog[k] ?? null;

  it("gives a node with empty outputs its catalog outputs, then the dynamic rule for its field values", () => {
    const tc = node("TypeConverterComponent-1", "TypeConverterComponent", [], { output_type: { type: "str", value: "JSON" } });
    const { nodes, changed } = fillMissingOutputs([tc], lookup);
    expect(changed).toEqual(["TypeConverterComponent-1"]);
    // output_type JSON: the converter's JSON output, as the reference's server derives it
    expect(nodes[0].data.node.outputs?.map((o) => o.name)).toEqual(["data_output"]);
  });

  it("fills a node with no outputs key at all from the catalog as is", () => {
    const co = node("ChatOutput-1", "ChatOutput", undefined);
    const { nodes } = fillMissingOutputs([co], lookup);
    expect(nodes[0].data.node.outputs).toEqual(catalog.ChatOutput.outputs);
    expect(nodes[0].data.node.outputs).not.toBe(catalog.ChatOutput.outputs); // a copy
  });

  it("leaves nodes with outputs, unknown components and notes alone", () => {
    const kept = node("ChatOutput-2", "ChatOutput", [out("custom", ["Message"])]);
    const unknown = node("Nope-1", "Nope", []);
    const note: FlowNode = { id: "note-1", type: "noteNode", position: { x: 0, y: 0 }, data: { id: "note-1", type: "note", node: { template: {} } } };
    const input = [kept, unknown, note];
    const result = fillMissingOutputs(input, lookup);
    expect(result.changed).toEqual([]);
    expect(result.nodes).toBe(input);
  });
});

describe("syncEdgeHandles", () => {
  const src = node("T-1", "TypeConverterComponent", [{ ...out("data_output", ["JSON"]) }]);
  const dst = node("O-1", "Operations", [], { data: { type: "other", input_types: ["JSON"] } });
  const th = { fieldName: "data", id: "O-1", inputTypes: ["JSON"], type: "other" };
  const stale = { dataType: "TypeConverterComponent", id: "T-1", name: "data_output", output_types: ["Message"] };
  const edge: FlowEdge = { id: "e1", source: "T-1", target: "O-1", sourceHandle: encodeHandle(stale), targetHandle: encodeHandle(th), data: { sourceHandle: stale, targetHandle: th } };

  it("re-encodes a source handle whose types differ from the node's output", () => {
    const [e] = syncEdgeHandles([src, dst], [edge]);
    expect(e.data.sourceHandle.output_types).toEqual(["JSON"]);
    expect(e.sourceHandle).toBe(encodeHandle({ ...stale, output_types: ["JSON"] }));
    expect(e.id).toBe("e1");
  });

  it("keeps the same array when every handle already matches, or the output is unknown", () => {
    const fresh = syncEdgeHandles([src, dst], [edge]);
    expect(syncEdgeHandles([src, dst], fresh)).toBe(fresh);
    const gone = [{ ...edge, data: { ...edge.data, sourceHandle: { ...stale, name: "nope" } } }];
    expect(syncEdgeHandles([src, dst], gone)).toBe(gone);
  });
});
