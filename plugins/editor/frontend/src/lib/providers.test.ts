import { describe, expect, it } from "vitest";
import { configuredProviders, pickerProviders, usesModel } from "./providers";

describe("model providers", () => {
  it("are set up when their variables exist", () => {
    expect(configuredProviders([])).toEqual([]);
    expect(configuredProviders(["OPENAI_COMPATIBLE_API_KEY"])).toEqual([]); // a key without a base URL
    expect(configuredProviders(["OPENAI_COMPATIBLE_BASE_URL"])).toEqual(["OpenAI Compatible"]);
    expect(configuredProviders(["OPENAI_API_KEY", "OPENAI_COMPATIBLE_BASE_URL"])).toEqual(["OpenAI Compatible", "OpenAI"]);
  });
  it("the picker offers those set up plus the field's own", () => {
    expect(pickerProviders(["OpenAI"], "Ollama")).toEqual(["OpenAI", "Ollama"]);
    expect(pickerProviders(["OpenAI"], "OpenAI")).toEqual(["OpenAI"]);
    expect(pickerProviders([], undefined)).toEqual([]);
  });
  it("a flow uses a model when a node has a model field", () => {
    const node = (template: Record<string, unknown>) => ({ data: { node: { template } } });
    expect(usesModel([node({ model: { type: "model" } })])).toBe(true);
    expect(usesModel([node({ model: { type: "str", _input_type: "ModelInput" } })])).toBe(true);
    expect(usesModel([node({ text: { type: "str" } }), { type: "noteNode" }])).toBe(false);
  });
});
