import { describe, expect, it } from "vitest";
import { applyEvent, initialBuild, outputPreview, type BuildState } from "./build";
import { NdjsonParser, parseAll } from "./ndjson";

const ev = (event: string, data: unknown) => JSON.stringify({ event, data }) + "\n\n";

// The event sequence of Chat Input -> Chat Output, as the reference frames it (reference-api.md section 3).
const STREAM =
  ev("vertices_sorted", { ids: ["ChatInput-AAAAA"], to_run: ["ChatInput-AAAAA", "ChatOutput-BBBBB"] }) +
  ev("build_start", {}) +
  ev("add_message", { id: "m1", sender: "User", sender_name: "User", text: "hello", session_id: "s1", timestamp: "2025-01-01 00:00:00 UTC" }) +
  ev("end_vertex", {
    build_data: {
      id: "ChatInput-AAAAA",
      valid: true,
      next_vertices_ids: ["ChatOutput-BBBBB"],
      inactivated_vertices: [],
      data: { outputs: { message: { message: { text: "hello" }, type: "message" } }, duration: 0.0123 },
    },
  }) +
  ev("add_message", { id: "m2", sender: "Machine", sender_name: "AI", text: "", session_id: "s1" }) +
  ev("token", { id: "m2", chunk: "HEL" }) +
  ev("token", { id: "m2", chunk: "LO" }) +
  ev("add_message", { id: "m2", sender: "Machine", sender_name: "AI", text: "HELLO", session_id: "s1" }) +
  ev("end_vertex", {
    build_data: { id: "ChatOutput-BBBBB", valid: true, data: { outputs: { message: { message: "HELLO", type: "text" } }, duration: "1.5 s" } },
  }) +
  ev("end", { build_duration: 0.05 });

function run(text: string): BuildState {
  return parseAll(text).reduce(applyEvent, initialBuild);
}

describe("NdjsonParser", () => {
  it("splits objects separated by blank lines", () => {
    const events = parseAll(STREAM);
    expect(events.map((e) => e.event)).toEqual([
      "vertices_sorted",
      "build_start",
      "add_message",
      "end_vertex",
      "add_message",
      "token",
      "token",
      "add_message",
      "end_vertex",
      "end",
    ]);
  });
  it("handles objects cut at any chunk boundary", () => {
    for (const size of [1, 2, 3, 7, 50]) {
      const p = new NdjsonParser();
      const got = [];
      for (let i = 0; i < STREAM.length; i += size) got.push(...p.push(STREAM.slice(i, i + size)));
      got.push(...p.flush());
      expect(got).toEqual(parseAll(STREAM));
    }
  });
  it("accepts the polling separator (three newlines) and a last object without newline", () => {
    const text = '{"event": "build_start", "data": {}}\n\n\n{"event": "end", "data": {}}';
    expect(parseAll(text).map((e) => e.event)).toEqual(["build_start", "end"]);
  });
  it("turns an unreadable line into an error event instead of throwing", () => {
    const events = parseAll('{"event": "build_start", "data": {}}\n\n{oops\n\n');
    expect(events[1].event).toBe("error");
    expect(events[1].data.text).toMatch(/Unreadable/);
  });
  it("ignores JSON that is not an event", () => {
    expect(parseAll('[1,2]\n\n{"x": 1}\n\n')).toEqual([]);
  });
});

describe("build state", () => {
  it("tracks node status, durations and previews", () => {
    const s = run(STREAM);
    expect(s.running).toBe(false);
    expect(s.nodes["ChatInput-AAAAA"]).toEqual({ status: "done", duration: "12 ms", preview: "hello", error: undefined, logs: [] });
    expect(s.nodes["ChatOutput-BBBBB"].status).toBe("done");
    expect(s.nodes["ChatOutput-BBBBB"].duration).toBe("1.5 s");
    expect(s.nodes["ChatOutput-BBBBB"].preview).toBe("HELLO");
    expect(s.duration).toBe(0.05);
  });
  it("marks queued, then running nodes while the build goes", () => {
    const partial = STREAM.split("\n\n").slice(0, 4).join("\n\n") + "\n\n";
    const s = run(partial);
    expect(s.running).toBe(true);
    expect(s.nodes["ChatInput-AAAAA"].status).toBe("done");
    expect(s.nodes["ChatOutput-BBBBB"].status).toBe("running");
  });
  it("collects messages, streams tokens and replaces the final message", () => {
    const s = run(STREAM);
    expect(s.messages.map((m) => [m.sender, m.text])).toEqual([
      ["User", "hello"],
      ["Machine", "HELLO"],
    ]);
    const mid = STREAM.split("\n\n").slice(0, 7).join("\n\n") + "\n\n";
    const streaming = run(mid);
    expect(streaming.messages[1]).toMatchObject({ text: "HELLO", streaming: true });
  });
  it("a token for an unknown message starts one", () => {
    const s = applyEvent(initialBuild, { event: "token", data: { id: "x", chunk: "Hi" } });
    expect(s.messages).toEqual([{ id: "x", sender: "Machine", sender_name: "AI", text: "Hi", streaming: true }]);
  });
  it("reports a failed component with its error message", () => {
    const s = applyEvent(initialBuild, {
      event: "end_vertex",
      data: { build_data: { id: "N-1", valid: false, params: "boom", data: { outputs: { out: { message: { errorMessage: "Select an operation.", stackTrace: "" }, type: "error" } } } } },
    });
    expect(s.nodes["N-1"]).toMatchObject({ status: "error", error: "Select an operation." });
  });
  it("keeps a component's log entries once each (the logs map repeats them per output)", () => {
    const entry = { name: "", message: "Blocked: 10.0.0.1 is a private address", type: "text" };
    const s = applyEvent(initialBuild, {
      event: "end_vertex",
      data: { build_data: { id: "U", valid: true, data: { outputs: {}, logs: { page_results: [entry], raw_results: [entry] } } } },
    });
    expect(s.nodes.U.logs).toEqual([{ name: undefined, message: "Blocked: 10.0.0.1 is a private address", type: "text" }]);
  });
  it("after a failed component, the error event skips the nodes scheduled next", () => {
    let s = applyEvent(initialBuild, {
      event: "end_vertex",
      data: { build_data: { id: "A", valid: false, next_vertices_ids: ["B"], data: { outputs: { o: { message: { errorMessage: "Boom" }, type: "error" } } } } },
    });
    expect(s.nodes.B.status).toBe("running");
    s = applyEvent(s, { event: "error", data: { error: "Boom" } });
    expect(s.nodes.A).toMatchObject({ status: "error", error: "Boom" });
    expect(s.nodes.B.status).toBe("inactive");
  });
  it("a failed component is the playground's error when the build ends", () => {
    let s = applyEvent(initialBuild, {
      event: "end_vertex",
      data: { build_data: { id: "N-1", valid: false, data: { outputs: { out: { message: { errorMessage: "Boom", stackTrace: "" }, type: "error" } } } } },
    });
    s = applyEvent(s, { event: "end", data: {} });
    expect(s.error).toBe("Boom");
    expect(run(STREAM).error).toBeUndefined();
  });
  it("an error event ends the build and marks running nodes failed", () => {
    let s = applyEvent(initialBuild, { event: "vertices_sorted", data: { ids: ["A"], to_run: ["A", "B"] } });
    s = applyEvent(s, { event: "error", data: { text: "Flow timed out" } });
    expect(s.running).toBe(false);
    expect(s.error).toBe("Flow timed out");
    expect(s.nodes.A).toMatchObject({ status: "error", error: "Flow timed out" });
    expect(s.nodes.B.status).toBe("inactive");
  });
  it("inactivated vertices are shown as skipped", () => {
    const s = applyEvent(initialBuild, { event: "end_vertex", data: { build_data: { id: "R", valid: true, inactivated_vertices: ["F"], data: {} } } });
    expect(s.nodes.F.status).toBe("inactive");
  });
  it("remove_message drops a message", () => {
    let s = applyEvent(initialBuild, { event: "add_message", data: { id: "m", text: "x", sender: "Machine" } });
    s = applyEvent(s, { event: "remove_message", data: { id: "m" } });
    expect(s.messages).toEqual([]);
  });
  it("previews JSON outputs as text", () => {
    expect(outputPreview({ data: { outputs: { data_output: { message: { word_count: 2 }, type: "object" } } } })).toBe('{"word_count":2}');
  });
});
