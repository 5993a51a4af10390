import { describe, expect, it } from "vitest";
import { takeFrames } from "../pages/PublicPlayground";
import { makeV2Snippets } from "./snippets";

describe("v2 snippets", () => {
  it("run the flow by id in every mode", () => {
    const s = makeV2Snippets({ baseUrl: "http://h:7860/", flowId: "f-1", apiKey: "sk-x", sessionId: "s" });
    expect(s.url).toBe("http://h:7860/api/v2/workflows");
    expect(s.curl).toContain(`"mode":"stream","stream_protocol":"agui"`);
    expect(s.curl).toContain(`"mode":"background"`);
    expect(s.curl).toContain("x-api-key: sk-x");
    expect(s.python).toContain('"flow_id": "f-1"');
    expect(s.javascript).toContain("job.links.status");
  });
  it("read the key from the environment when none is given", () => {
    const s = makeV2Snippets({ baseUrl: "http://h", flowId: "f" });
    expect(s.python.startsWith("import os")).toBe(true);
    expect(s.javascript).toContain("process.env.SERVICE_API_KEY");
  });
});

describe("public playground stream parsing", () => {
  it("keeps incomplete frames buffered", () => {
    const { frames, rest } = takeFrames('data: {"type":"RUN_STARTED"}\nid: 0\n\ndata: {"type":"TEXT');
    expect(frames).toEqual([{ type: "RUN_STARTED" }]);
    expect(rest).toBe('data: {"type":"TEXT');
  });
});
