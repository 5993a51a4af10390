import { describe, expect, it } from "vitest";
import catalog from "./__fixtures__/catalog.json";
import { connect, createNode, encodeHandle, sourceHandleFor, targetHandleFor } from "./flow";
import { GROUP_TYPE, groupFlow, groupNodes, groupRun, innerIds, ungroupNode } from "./group";
import type { FlowEdge, FlowNode, FrontendNode } from "./types";

const cat = catalog as unknown as Record<string, Record<string, FrontendNode>>;

function chain(): { nodes: FlowNode[]; edges: FlowEdge[] } {
  const a = createNode("ChatInput", cat.input_output.ChatInput, { x: 0, y: 0 });
  const b = createNode("ChatOutput", cat.input_output.ChatOutput, { x: 400, y: 0 });
  const c = createNode("ChatOutput", cat.input_output.ChatOutput, { x: 800, y: 0 });
  const nodes = [a, b, c];
  const e1 = connect(nodes, [], { source: a.id, target: b.id, sourceHandle: encodeHandle(sourceHandleFor(a, "message")!), targetHandle: encodeHandle(targetHandleFor(b, "input_value")!) });
  const e2 = connect(nodes, [], { source: b.id, target: c.id, sourceHandle: encodeHandle(sourceHandleFor(b, "message")!), targetHandle: encodeHandle(targetHandleFor(c, "input_value")!) });
  if (!e1.ok || !e2.ok) throw new Error("fixture");
  return { nodes, edges: [e1.edge, e2.edge] };
}

describe("grouping", () => {
  it("needs two components", () => {
    const { nodes, edges } = chain();
    expect(groupNodes(nodes, edges, [nodes[0].id]).ok).toBe(false);
  });

  it("exposes unconnected inner fields and outputs with proxies, and rewires crossing edges", () => {
    const { nodes, edges } = chain();
    const r = groupNodes(nodes, edges, [nodes[1].id, nodes[2].id]);
    if (!r.ok) throw new Error(r.reason);
    const g = r.nodes.find((n) => n.id === r.groupId)!;
    expect(g.data.type).toBe(GROUP_TYPE);
    expect(groupFlow(g)!.nodes.map((n) => n.id)).toEqual([nodes[1].id, nodes[2].id]);
    expect(groupFlow(g)!.edges).toHaveLength(1);
    const t = g.data.node.template as Record<string, { proxy?: { id: string; field: string } }>;
    // b's input_value is connected from outside: exposed; c's input_value is connected inside: not exposed
    expect(t[`input_value_${nodes[1].id}`].proxy).toEqual({ id: nodes[1].id, field: "input_value" });
    expect(t[`input_value_${nodes[2].id}`]).toBeUndefined();
    // b's output is used inside only: not exposed; c's is free: exposed
    expect((g.data.node.outputs ?? []).map((o) => o.name)).toEqual([`message_${nodes[2].id}`]);
    expect(r.edges).toHaveLength(1);
    expect(r.edges[0].target).toBe(r.groupId);
    expect(r.edges[0].data.targetHandle.proxy).toEqual({ id: nodes[1].id, field: "input_value" });
    expect(r.edges[0].targetHandle).toBe(encodeHandle(targetHandleFor(g, `input_value_${nodes[1].id}`)!));
  });

  it("ungroups back to the same graph, with the group's values and where the group was moved", () => {
    const { nodes, edges } = chain();
    const r = groupNodes(nodes, edges, [nodes[1].id, nodes[2].id]);
    if (!r.ok) throw new Error(r.reason);
    const moved = r.nodes.map((n) => (n.id === r.groupId ? { ...n, position: { x: n.position.x + 100, y: 50 } } : n));
    const g = moved.find((n) => n.id === r.groupId)!;
    const key = `sender_name_${nodes[1].id}`;
    (g.data.node.template[key] as { value: unknown }).value = "Bot";
    const u = ungroupNode(moved, r.edges, r.groupId);
    if (!u.ok) throw new Error(u.reason);
    expect(u.nodes.map((n) => n.id).sort()).toEqual(nodes.map((n) => n.id).sort());
    expect(u.edges.map((e) => e.id).sort()).toEqual(edges.map((e) => e.id).sort());
    const b = u.nodes.find((n) => n.id === nodes[1].id)!;
    expect(b.position).toEqual({ x: 500, y: 50 });
    expect((b.data.node.template.sender_name as { value: unknown }).value).toBe("Bot");
  });
});

describe("a group's build status", () => {
  it("names its inner components (nested groups too, notes left out)", () => {
    const { nodes, edges } = chain();
    const r = groupNodes(nodes, edges, [nodes[1].id, nodes[2].id]);
    if (!r.ok) throw new Error(r.reason);
    const g = r.nodes.find((n) => n.id === r.groupId)!;
    expect(innerIds(g)).toEqual([nodes[1].id, nodes[2].id]);
    const outer = groupNodes(r.nodes, r.edges, [nodes[0].id, g.id]);
    if (!outer.ok) throw new Error(outer.reason);
    expect(innerIds(outer.nodes.find((n) => n.id === outer.groupId)!)).toEqual([nodes[0].id, nodes[1].id, nodes[2].id]);
  });

  it("follows its inner components: nothing, running, error, done", () => {
    const ids = ["a", "b"];
    expect(groupRun(ids, {})).toBeUndefined();
    expect(groupRun(ids, { a: { status: "queued" }, b: { status: "queued" } })?.status).toBe("queued");
    expect(groupRun(ids, { a: { status: "done", duration: "20 ms" }, b: { status: "queued" } })?.status).toBe("running");
    expect(groupRun(ids, { a: { status: "running" } })?.status).toBe("running");
    const failed = groupRun(ids, { a: { status: "done" }, b: { status: "error", error: "boom" } }, { b: "Chat Output" });
    expect(failed).toMatchObject({ status: "error", error: "Chat Output: boom" });
    const done = groupRun(ids, { a: { status: "done", duration: "200 ms", preview: "x" }, b: { status: "done", duration: "1.50 s", preview: "HELLO" } });
    expect(done).toMatchObject({ status: "done", duration: "1.70 s", preview: "HELLO" });
    expect(groupRun(ids, { a: { status: "inactive" } })?.status).toBe("inactive");
  });
});
