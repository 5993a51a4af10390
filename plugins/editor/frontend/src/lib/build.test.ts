import { describe, expect, it } from "vitest";
import { applyEvent, initialBuild, type BuildState } from "./build";

const apply = (s: BuildState, event: string, data: unknown) => applyEvent(s, { event, data } as never);

describe("agent events", () => {
  it("collects tool calls by id through their phases", () => {
    let s = apply(initialBuild, "tool_call", { id: "c1", phase: "start", tool: "evaluate_expression", arguments: "" });
    s = apply(s, "tool_call", { id: "c1", phase: "args", tool: "evaluate_expression", arguments: '{"expression":"6*7"}' });
    s = apply(s, "tool_call", { id: "c2", phase: "start", tool: "get_current_date", arguments: "{}" });
    expect(s.toolCalls?.map((c) => c.done)).toEqual([false, false]);
    s = apply(s, "tool_call", { id: "c1", phase: "result", tool: "evaluate_expression", arguments: '{"expression":"6*7"}', result: "42" });
    expect(s.toolCalls?.[0]).toEqual({ id: "c1", tool: "evaluate_expression", arguments: '{"expression":"6*7"}', result: "42", done: true });
    expect(s.toolCalls?.[1].done).toBe(false);
  });

  it("turns a suspended event into a pending approval and stops running", () => {
    let s = apply(initialBuild, "vertices_sorted", { ids: ["A"], to_run: ["A", "Agent-1"] });
    s = apply(s, "suspended", {
      vertex_id: "Agent-1",
      request_id: "r1",
      request: { type: "tool_approval", tool: "send", arguments: { to: "x" }, actions: ["approve", "reject", "edit"] },
    });
    expect(s.running).toBe(false);
    expect(s.pending).toEqual({ request_id: "r1", vertex_id: "Agent-1", tool: "send", arguments: { to: "x" }, actions: ["approve", "reject", "edit"] });
  });

  it("lets the stored copy of a streamed answer take its place (one message, not two)", () => {
    let s = apply(initialBuild, "token", { id: "agent-msg", chunk: "It is" });
    s = apply(s, "token", { id: "agent-msg", chunk: " 42." });
    s = apply(s, "add_message", { id: "output-msg", text: "It is 42.", sender: "Machine", sender_name: "AI" });
    expect(s.messages.map((m) => [m.id, m.text, m.streaming])).toEqual([["output-msg", "It is 42.", false]]);
    s = apply(s, "add_message", { id: "other", text: "It is 42.", sender: "Machine", sender_name: "AI" });
    expect(s.messages).toHaveLength(2); // nothing streaming any more: a real second message
  });

  it("ends every stream at the end of the run", () => {
    let s = apply(initialBuild, "token", { id: "m1", chunk: "partial" });
    s = apply(s, "end", {});
    expect(s.messages[0].streaming).toBe(false);
  });

  it("streams tokens into one message that the final message replaces", () => {
    let s = apply(initialBuild, "token", { id: "m1", chunk: "Hel" });
    s = apply(s, "token", { id: "m1", chunk: "lo" });
    expect(s.messages[0]).toMatchObject({ text: "Hello", streaming: true });
    s = apply(s, "add_message", { id: "m1", sender: "Machine", sender_name: "AI", text: "Hello!" });
    expect(s.messages).toHaveLength(1);
    expect(s.messages[0]).toMatchObject({ text: "Hello!", streaming: false });
  });
});
