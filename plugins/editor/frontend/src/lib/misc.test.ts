import { describe, expect, it } from "vitest";
import { describeError } from "./errors";
import { latestOnly } from "./latest";
import { makeSnippets, pyLiteral } from "./snippets";

describe("API errors in plain words", () => {
  it("uses the detail string", () => {
    expect(describeError(400, { detail: "This username is unavailable." })).toBe("This username is unavailable.");
  });
  it("lists 422 validation items with their location", () => {
    expect(describeError(422, { detail: [{ loc: ["body", "name"], msg: "Missing data for required field.", type: "missing" }] })).toBe(
      "name: Missing data for required field.",
    );
  });
  it("reads object details with a message", () => {
    expect(describeError(403, { detail: { message: "Auto login is disabled.", auto_login: false } })).toBe("Auto login is disabled.");
  });
  it("falls back to the status", () => {
    expect(describeError(500, undefined)).toMatch(/server failed/);
    expect(describeError(429, "<html>")).toMatch(/Too many requests/);
    expect(describeError(404, { detail: "Not Found" })).toMatch(/not available/);
  });
});

describe("API snippets", () => {
  const s = makeSnippets({ baseUrl: "http://localhost:7860/", flowId: "f-1", apiKey: "sk-abc", sessionId: "s-1", inputValue: "hi" });
  it("target the run endpoint with the key header and the simplified body", () => {
    expect(s.runUrl).toBe("http://localhost:7860/api/v1/run/f-1");
    expect(s.webhookUrl).toBe("http://localhost:7860/api/v1/webhook/f-1");
    expect(s.body).toEqual({ input_value: "hi", input_type: "chat", output_type: "chat", session_id: "s-1" });
    expect(s.curl).toContain("-H 'x-api-key: sk-abc'");
    expect(s.curl).toContain(`-d '${JSON.stringify(s.body)}'`);
    expect(s.python).toContain('"x-api-key": api_key');
    expect(s.python).toContain('api_key = "sk-abc"');
    expect(s.javascript).toContain('"x-api-key": apiKey');
    expect(s.webhookCurl).toContain("/api/v1/webhook/f-1");
  });
  it("prefer the endpoint name and carry tweaks", () => {
    const t = makeSnippets({ baseUrl: "http://h", flowId: "f", endpointName: "my-flow", tweaks: { "ChatInput-1": { input_value: "x" } } });
    expect(t.runUrl).toBe("http://h/api/v1/run/my-flow");
    expect(t.body.tweaks).toEqual({ "ChatInput-1": { input_value: "x" } });
    expect(t.curl).toContain("$SERVICE_API_KEY");
    expect(t.python).toContain('os.environ["SERVICE_API_KEY"]');
  });
  it("quote single quotes for the shell", () => {
    const q = makeSnippets({ baseUrl: "http://h", flowId: "f", inputValue: "it's", sessionId: "s" });
    expect(q.curl).toContain(`it'\\''s`);
  });
  it("write Python literals", () => {
    expect(pyLiteral({ a: true, b: null, c: [1, "x"] })).toBe('{\n    "a": True,\n    "b": None,\n    "c": [\n        1,\n        "x"\n    ]\n}');
  });
});

describe("overlapping loads", () => {
  it("lets only the newest load apply its answer, whatever order they answer in", async () => {
    const start = latestOnly();
    const shown: string[] = [];
    let answerFirst: (v: string) => void = () => {};
    const first = new Promise<string>((resolve) => (answerFirst = resolve));
    async function load(answer: Promise<string>) {
      const isNewest = start();
      const value = await answer;
      if (isNewest()) shown.push(value);
    }
    const older = load(first);
    const newer = load(Promise.resolve("after import"));
    await newer;
    answerFirst("before import");
    await older;
    expect(shown).toEqual(["after import"]);
  });
  it("applies a lone load", async () => {
    const start = latestOnly();
    const isNewest = start();
    expect(isNewest()).toBe(true);
    start();
    expect(isNewest()).toBe(false);
  });
});
