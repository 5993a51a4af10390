import { describe, expect, it } from "vitest";
import catalog from "./__fixtures__/catalog.json";
import chatEcho from "./__fixtures__/chat-echo.json";
import dataOps from "./__fixtures__/data-operations-uppercase.json";
import {
  connect,
  copySelection,
  createNode,
  createNote,
  decodeHandle,
  edgeId,
  encodeHandle,
  fromFlowData,
  isValidConnection,
  pasteClipboard,
  removeNodes,
  setFieldValue,
  sourceHandleFor,
  stableStringify,
  targetHandleFor,
  toFlowData,
  unknownComponents,
  upstreamOf,
} from "./flow";
import type { FlowData, FlowNode, FrontendNode } from "./types";

const cat = catalog as unknown as Record<string, Record<string, FrontendNode>>;
const CHAT_IN = cat.input_output.ChatInput;
const CHAT_OUT = cat.input_output.ChatOutput;
const OPS = cat.processing.Operations;
const PARSER = cat.processing.ParserComponent;

function threeNodes() {
  const a = createNode("ChatInput", CHAT_IN, { x: 0, y: 0 });
  const b = createNode("Operations", OPS, { x: 400, y: 0 });
  const c = createNode("ChatOutput", CHAT_OUT, { x: 800, y: 0 });
  return [a, b, c];
}

function link(nodes: FlowNode[], edges: ReturnType<typeof fromFlowData>["edges"], from: FlowNode, output: string, to: FlowNode, field: string) {
  const r = connect(nodes, edges, {
    source: from.id,
    target: to.id,
    sourceHandle: encodeHandle(sourceHandleFor(from, output)!),
    targetHandle: encodeHandle(targetHandleFor(to, field)!),
  });
  if (!r.ok) throw new Error(r.reason);
  return r;
}

describe("handle strings", () => {
  it("reproduce the reference's œ-encoded strings byte for byte", () => {
    for (const fixture of [chatEcho, dataOps]) {
      for (const e of (fixture.data as unknown as FlowData).edges) {
        expect(encodeHandle(e.data.sourceHandle)).toBe(e.sourceHandle);
        expect(encodeHandle(e.data.targetHandle)).toBe(e.targetHandle);
        expect(edgeId(e.source, e.sourceHandle, e.target, e.targetHandle)).toBe(e.id);
      }
    }
  });
  it("decode back to the dicts", () => {
    const e = (chatEcho.data as unknown as FlowData).edges[0];
    expect(decodeHandle(e.sourceHandle)).toEqual(e.data.sourceHandle);
    expect(decodeHandle(e.targetHandle)).toEqual(e.data.targetHandle);
    expect(decodeHandle("not json")).toBeNull();
  });
  it("sort keys and use Python's separators", () => {
    expect(stableStringify({ b: [1, "x"], a: { d: null, c: true } })).toBe('{"a": {"c": true, "d": null}, "b": [1, "x"]}');
  });
});

describe("nodes", () => {
  it("are created in the export format from a catalog entry", () => {
    const n = createNode("ChatInput", CHAT_IN, { x: 10.4, y: 20.6 });
    expect(n.type).toBe("genericNode");
    expect(n.id).toMatch(/^ChatInput-[A-Za-z0-9]{5}$/);
    expect(n.data.id).toBe(n.id);
    expect(n.data.type).toBe("ChatInput");
    expect(n.data.node.template.input_value).toBeDefined();
    expect(n.position).toEqual({ x: 10, y: 21 });
    // a deep copy: editing the node never touches the catalog
    const edited = setFieldValue(n, "input_value", { value: "hi" });
    expect((edited.data.node.template.input_value as { value: string }).value).toBe("hi");
    expect((CHAT_IN.template.input_value as { value: string }).value).toBe("");
    expect((n.data.node.template.input_value as { value: string }).value).toBe("");
  });
  it("avoid taken ids", () => {
    const taken = new Set<string>();
    for (let i = 0; i < 200; i++) taken.add(createNode("ChatInput", CHAT_IN, { x: 0, y: 0 }, taken).id);
    expect(taken.size).toBe(200);
  });
  it("notes use noteNode", () => {
    const n = createNote({ x: 0, y: 0 }, "hello");
    expect(n.type).toBe("noteNode");
    expect(n.data.type).toBe("note");
    expect(n.data.node.description).toBe("hello");
  });
});

describe("connections", () => {
  it("build reference edges between compatible handles", () => {
    const nodes = threeNodes();
    const [a, b] = nodes;
    const r = link(nodes, [], a, "message", b, "text_input");
    expect(r.edge.data.sourceHandle).toEqual({ dataType: "ChatInput", id: a.id, name: "message", output_types: ["Message"] });
    expect(r.edge.data.targetHandle).toEqual({ fieldName: "text_input", id: b.id, inputTypes: ["Message"], type: "str" });
    expect(r.edge.sourceHandle).toBe(encodeHandle(r.edge.data.sourceHandle));
    expect(r.edge.id).toBe(`reactflow__edge-${a.id}${r.edge.sourceHandle}-${b.id}${r.edge.targetHandle}`);
  });
  it("refuse incompatible types with a reason", () => {
    const a = createNode("ChatInput", CHAT_IN, { x: 0, y: 0 });
    const p = createNode("ParserComponent", PARSER, { x: 0, y: 0 });
    const nodes = [a, p];
    const c = {
      source: a.id,
      target: p.id,
      sourceHandle: encodeHandle(sourceHandleFor(a, "message")!),
      targetHandle: encodeHandle(targetHandleFor(p, "input_data")!),
    };
    const r = connect(nodes, [], c);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/Message cannot connect/);
    expect(isValidConnection(nodes, c)).toBe(false);
  });
  it("accept aliases (Message output into a Data/JSON/Table/Message field)", () => {
    const nodes = threeNodes();
    const [a, , c] = nodes;
    const conn = {
      source: a.id,
      target: c.id,
      sourceHandle: encodeHandle(sourceHandleFor(a, "message")!),
      targetHandle: encodeHandle(targetHandleFor(c, "input_value")!),
    };
    expect(isValidConnection(nodes, conn)).toBe(true);
  });
  it("refuse self-connections and duplicates", () => {
    const nodes = threeNodes();
    const [a, b] = nodes;
    const self = connect(nodes, [], { source: b.id, target: b.id, sourceHandle: encodeHandle(sourceHandleFor(b, "message_output")!), targetHandle: encodeHandle(targetHandleFor(b, "text_input")!) });
    expect(self.ok).toBe(false);
    const first = link(nodes, [], a, "message", b, "text_input");
    const again = connect(nodes, [first.edge], { source: a.id, target: b.id, sourceHandle: first.edge.sourceHandle, targetHandle: first.edge.targetHandle });
    expect(again.ok).toBe(false);
  });
  it("replace the edge of a single-value field", () => {
    const nodes = threeNodes();
    const [a, b, c] = nodes;
    const first = link(nodes, [], a, "message", c, "input_value");
    const second = link(nodes, [first.edge], b, "message_output", c, "input_value");
    expect(second.replaced).toEqual([first.edge.id]);
  });
  it("fields without input types have no handle", () => {
    const c = createNode("ChatOutput", CHAT_OUT, { x: 0, y: 0 });
    expect(targetHandleFor(c, "should_store_message")).toBeNull();
    expect(sourceHandleFor(c, "nope")).toBeNull();
  });
});

describe("graph edits", () => {
  it("removing nodes drops their edges", () => {
    const nodes = threeNodes();
    const [a, b, c] = nodes;
    const e1 = link(nodes, [], a, "message", b, "text_input").edge;
    const e2 = link(nodes, [e1], b, "message_output", c, "input_value").edge;
    const r = removeNodes(nodes, [e1, e2], [b.id]);
    expect(r.nodes.map((n) => n.id)).toEqual([a.id, c.id]);
    expect(r.edges).toEqual([]);
  });
  it("copy/paste gives fresh ids, offsets positions and re-encodes inner edges", () => {
    const nodes = threeNodes();
    const [a, b, c] = nodes;
    const e1 = link(nodes, [], a, "message", b, "text_input").edge;
    const e2 = link(nodes, [e1], b, "message_output", c, "input_value").edge;
    const clip = copySelection(nodes, [e1, e2], [a.id, b.id]);
    expect(clip.nodes).toHaveLength(2);
    expect(clip.edges).toHaveLength(1); // only the edge inside the selection
    const pasted = pasteClipboard(clip, nodes, { x: 50, y: 50 });
    expect(pasted.nodes.map((n) => n.id)).not.toContain(a.id);
    expect(pasted.nodes[0].position).toEqual({ x: a.position.x + 50, y: a.position.y + 50 });
    expect(pasted.nodes[0].data.id).toBe(pasted.nodes[0].id);
    const pe = pasted.edges[0];
    expect(pe.source).toBe(pasted.nodes[0].id);
    expect(pe.target).toBe(pasted.nodes[1].id);
    expect(pe.data.sourceHandle.id).toBe(pe.source);
    expect(pe.data.targetHandle.id).toBe(pe.target);
    expect(pe.sourceHandle).toBe(encodeHandle(pe.data.sourceHandle));
    expect(pe.id).toBe(edgeId(pe.source, pe.sourceHandle, pe.target, pe.targetHandle));
    // the clipboard itself is untouched
    expect(clip.nodes[0].id).toBe(a.id);
  });
  it("upstreamOf collects what a partial build needs", () => {
    const nodes = threeNodes();
    const [a, b, c] = nodes;
    const e1 = link(nodes, [], a, "message", b, "text_input").edge;
    const e2 = link(nodes, [e1], b, "message_output", c, "input_value").edge;
    expect(upstreamOf([e1, e2], b.id)).toEqual(new Set([a.id, b.id]));
    expect(upstreamOf([e1, e2], c.id)).toEqual(new Set([a.id, b.id, c.id]));
  });
});

describe("(de)serialisation", () => {
  it("round-trips the reference fixtures unchanged", () => {
    for (const fixture of [chatEcho, dataOps]) {
      const data = fixture.data as unknown as FlowData;
      const state = fromFlowData(data);
      const out = toFlowData(state.nodes, state.edges, data.viewport);
      expect(out).toEqual({ ...data, viewport: data.viewport ?? { x: 0, y: 0, zoom: 1 } });
    }
  });
  it("strips UI-only keys", () => {
    const [a] = threeNodes();
    const out = toFlowData([{ ...a, selected: true, dragging: false }], [], { x: 1, y: 2, zoom: 0.5 });
    expect(out.nodes[0]).not.toHaveProperty("selected");
    expect(out.nodes[0]).not.toHaveProperty("dragging");
    expect(out.viewport).toEqual({ x: 1, y: 2, zoom: 0.5 });
  });
  it("fills in handle strings or dicts when one side is missing, and drops dangling edges", () => {
    const data = JSON.parse(JSON.stringify(chatEcho.data)) as FlowData;
    const e = data.edges[0];
    const onlyDicts = { source: e.source, target: e.target, data: e.data } as unknown as FlowData["edges"][0];
    const onlyStrings = { source: e.source, target: e.target, sourceHandle: e.sourceHandle, targetHandle: e.targetHandle } as unknown as FlowData["edges"][0];
    const dangling = { ...e, target: "Nope-XXXXX" };
    const state = fromFlowData({ nodes: data.nodes, edges: [onlyDicts, onlyStrings, dangling] });
    expect(state.edges).toHaveLength(2);
    for (const x of state.edges) {
      expect(x.sourceHandle).toBe(e.sourceHandle);
      expect(x.data.targetHandle).toEqual(e.data.targetHandle);
      expect(x.id).toBe(e.id);
    }
  });
  it("tolerates empty or missing data", () => {
    expect(fromFlowData(null)).toEqual({ nodes: [], edges: [], viewport: undefined });
    expect(fromFlowData({ nodes: [{ id: "note-1", type: "noteNode", position: { x: 0, y: 0 }, data: { type: "note" } } as unknown as FlowNode] }).nodes[0].data.node.template).toEqual({});
  });
  it("lists components the server does not know", () => {
    const state = fromFlowData(dataOps.data as unknown as FlowData);
    expect(unknownComponents(state.nodes, new Set(["ChatInput", "ChatOutput", "Operations"]))).toEqual([]);
    expect(unknownComponents(state.nodes, new Set(["ChatInput"]))).toEqual(["Operations", "ChatOutput"].filter((k) => state.nodes.some((n) => n.data.type === k)));
  });
});

describe("free positions for keyboard adds", () => {
  it("keeps the spot when it is free and moves right past occupied ones", async () => {
    const { freePosition } = await import("./flow");
    const a = createNode("ChatInput", CHAT_IN, { x: 0, y: 0 });
    expect(freePosition({ x: 1000, y: 0 }, [a])).toEqual({ x: 1000, y: 0 });
    const p = freePosition({ x: 0, y: 0 }, [a]);
    expect(p.y).toBe(0);
    expect(p.x).toBeGreaterThanOrEqual(300);
    const b = createNode("ChatInput", CHAT_IN, p);
    const q = freePosition({ x: 0, y: 0 }, [a, b]);
    expect(q.x).toBeGreaterThan(p.x);
  });
});

describe("tweaks for the API snippet", () => {
  it("carry visible plain values, never secrets, handles or the chat message", async () => {
    const { defaultTweaks } = await import("./flow");
    const state = fromFlowData(dataOps.data as unknown as FlowData);
    const t = defaultTweaks(state.nodes);
    const ops = state.nodes.find((n) => n.data.type === "Operations")!;
    expect(t[ops.id]).toMatchObject({ case_type: "uppercase", input_type: "Text", text_input: "hello there" });
    expect(t[ops.id]).not.toHaveProperty("operation"); // a list, not a plain value
    const chatIn = createNode("ChatInput", CHAT_IN, { x: 0, y: 0 });
    expect(defaultTweaks([chatIn])[chatIn.id] ?? {}).not.toHaveProperty("input_value");
    const secret = setFieldValue(createNode("ChatOutput", CHAT_OUT, { x: 0, y: 0 }), "sender_name", { password: true, advanced: false });
    expect(defaultTweaks([secret])[secret.id] ?? {}).not.toHaveProperty("sender_name");
  });
});
