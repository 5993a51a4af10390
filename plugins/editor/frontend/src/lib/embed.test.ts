import { describe, expect, it } from "vitest";
import { EMBED_ELEMENT, embedSnippet } from "./embed";

describe("embedSnippet", () => {
  it("names the flow, the host without a trailing slash and the key, escaped", () => {
    const s = embedSnippet({ hostUrl: "https://flows.example.com/", flowId: "f-1", windowTitle: 'Say "hi" <b>', apiKey: "sk-1" });
    expect(s).toContain(`<${EMBED_ELEMENT}`);
    expect(s).toContain('host_url="https://flows.example.com"');
    expect(s).toContain('flow_id="f-1"');
    expect(s).toContain('window_title="Say &quot;hi&quot; &lt;b>"');
    expect(s).toContain('api_key="sk-1"');
  });
  it("leaves the key out when there is none", () => {
    expect(embedSnippet({ hostUrl: "http://h", flowId: "f", windowTitle: "t" })).not.toContain("api_key");
  });
});
